/// `token add|list|revoke` (SPEC "Who may do what: named tokens";
/// docs/SERVER.md "Running it for a team"), declared once like every
/// other command (Declaration.swift).
extension Options {
  static let read = OptionDeclaration(
    name: "read", value: "PATTERN", help: "let it read these streams: a name, a prefix ending in /*, or *",
    completion: .streams, repeatable: true)
  static let write = OptionDeclaration(
    name: "write", value: "PATTERN", help: "let it read and write these streams", completion: .streams,
    repeatable: true)
  static let erase = OptionDeclaration(
    name: "erase", value: "PATTERN", help: "let it read, write and erase in these streams", completion: .streams,
    repeatable: true)
  static let expires = OptionDeclaration(
    name: "expires", value: "DURATION", help: "make it expire after this long: 30d, 12h, 90m (default: never)")
}

extension CommandDeclaration {
  /// What `token` does, by its first argument.
  enum TokenAction: String, CaseIterable {
    case add, list, revoke
  }

  static let tokenCommand = CommandDeclaration(
    name: .token, summary: "make, list or revoke the named tokens serve lets in",
    overview: """
      Manage the named tokens 'msglog serve' asks for once the database holds one. 'token add \
      NAME' makes a token for NAME (1 to 64 letters, digits, '.', '_' or '-'; unique among live \
      tokens) and prints it once: only its id and a hash of its secret are kept. What it may do \
      is given by stream patterns: a stream name, a prefix ending in /* that matches on / \
      boundaries (team/* matches team/board and team/a/b, not team), or * for every stream; \
      --write includes reading, --erase includes writing; a token without a pattern may do \
      nothing. What it writes is sent as NAME. 'token list' shows every token (never a secret); \
      'token revoke NAME|ID' revokes one for good, and every serve of the log refuses it from \
      its next request on. The log's first token counts for every running serve by the time \
      'token add' returns (it waits a quarter second for that). Refused in a replica: tokens \
      are kept by the log it syncs with.
      """,
    arguments: [
      ArgumentDeclaration(
        name: "ACTION", help: "add, list or revoke", completion: .words(TokenAction.allCases.map(\.rawValue))),
      ArgumentDeclaration(name: "NAME", help: "the token's name (add), or its name or id (revoke)", optional: true),
    ],
    options: [Options.read, Options.write, Options.erase, Options.expires], shared: [Options.db, Options.json],
    example: """
      msglog token add ann --write 'team/*' --read '*' --expires 90d
      msglog token list
      msglog token revoke ann
      """)
}
