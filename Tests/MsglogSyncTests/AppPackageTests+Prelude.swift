/// What the docs' code leaves to the app — where its documents are, the
/// remote, the screen — for `AppPackageTests`' executables: the app's own
/// code, so it is here and not in the docs.
enum Prelude {
  /// For SWIFT.md's: a log in `APP_DOCUMENTS`; the screen is done once it
  /// shows the message written.
  static let swiftDoc = #"""
    import Foundation
    import Msglog

    let documents = ProcessInfo.processInfo.environment["APP_DOCUMENTS"] ?? "."

    /// What a detached task keeps up to date: nothing, here.
    func index(_ change: ItemChange) {}

    @MainActor func render(_ items: [Item]) {
      print("render: " + items.map(\.text).joined(separator: " | "))
      if items.contains(where: { $0.text == "Morning!" }) { withUnsafeCurrentTask { $0?.cancel() } }
    }

    """#

  /// For SYNC.md's: a replica in `APP_DOCUMENTS` of `APP_REMOTE`, whose
  /// database is `APP_SERVER_DB`, where bob writes once the screen shows
  /// its first list. Each list shown is printed (`*`: pending) and must
  /// hold each id once; the screen is done — its task cancelled, as when
  /// it goes — once it shows what the server has, bob's message in it.
  static let syncDoc = #"""
    import Foundation
    import Msglog

    let environment = ProcessInfo.processInfo.environment
    let documents = environment["APP_DOCUMENTS"] ?? "."
    let remote = environment["APP_REMOTE"] ?? ""
    let token: String? = nil
    let atServer = try! EventLog(environment["APP_SERVER_DB"] ?? "")
    @MainActor var bobWrote = false

    @MainActor func showSyncState(_ notice: EventLog.SyncNotice) {}

    @MainActor func showSyncFailed(_ error: any Error) {
      print("sync failed: \(error)")
      exit(1)
    }

    @MainActor func render(_ items: [Item]) {
      print("render: " + items.map { $0.text + ($0.pending ? "*" : "") }.joined(separator: " | "))
      guard Set(items.map(\.id)).count == items.count else {
        print("an id twice")
        exit(1)
      }
      if !bobWrote {
        bobWrote = true
        try! atServer.append("from bob at the server", sender: "bob", to: "chat")
      }
      let server = try! atServer.stream("chat").items().items
      if items == server, items.contains(where: { $0.text == "from bob at the server" }) {
        print("settled")
        withUnsafeCurrentTask { $0?.cancel() }
      }
    }

    """#
}
