/// The options of a replica's commands (`clone`, `sync`, `status`;
/// docs/SYNC.md), declared once like every other (Declaration.swift).
extension Options {
  static let remoteToken = OptionDeclaration(
    name: "token", value: "TOKEN",
    help: "bearer token the remote's msglog serve wants (default: $MSGLOG_TOKEN, which ps does not show)")
  static let cacert = OptionDeclaration(
    name: "cacert", value: "FILE",
    help: "check an https:// remote's certificate against these CAs (PEM) instead of the system's", completion: .files)
  static let syncFollow = OptionDeclaration(
    name: "follow", short: "f", help: "keep in sync live: push changes as they are made, pull events as they commit")
  static let reset = OptionDeclaration(
    name: "reset", help: "clone the remote afresh under a new replica id, keeping the pending changes, then push them")
  static let remote = OptionDeclaration(
    name: "remote", value: "URL",
    help: "the remote's new address: sync with it, and keep it once it holds this replica's log")
  static let syncTimeout = OptionDeclaration(
    name: "timeout", value: "SECONDS",
    help: "give up on a slow remote after this long in all (default 900; for sync --follow, each round)")
  static let verbose = OptionDeclaration(
    name: "verbose", short: "v", help: "list each pending change, and the replica's id")
  static let clear = OptionDeclaration(name: "clear", help: "forget the refused changes listed so far")
}
