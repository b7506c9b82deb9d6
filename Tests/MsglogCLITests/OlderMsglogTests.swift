import Foundation
import MsglogTestSupport
import Synchronization
import Testing

/// A log made by the msglog of the commit before working together (built
/// from the repository's history in a temporary worktree, once, and kept
/// under .build): this msglog reads and writes it without changing its
/// format until it appends the first edit, restore or undo; from then on
/// the older msglog refuses it by its format (LMDB `msglog/3`, PostgreSQL
/// schema 2, upgraded in place from 1), and reads it again never.
@Suite(.serialized) struct OlderMsglogTests {
  /// The older binary, built once per run (or found from an earlier one).
  static let older: Mutex<String?> = Mutex(nil)

  static func olderBinary() throws -> String {
    try older.withLock { cached in
      if let cached { return cached }
      // The last commit before the events of working together: the parent of
      // the one that added the undo, found by what it added (robust to rebases).
      let added = runProgram(
        "/usr/bin/git",
        ["-C", repositoryRoot, "log", "-1", "--format=%H", "--diff-filter=A", "--",
          "Sources/MsglogCore/Ledger/LedgerSession+Undo.swift"])
      let commit = added.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
      try #require(added.code == 0 && commit.count == 40, "the repository's history is needed: \(added)")
      let binary = repositoryRoot + "/.build/older-msglog-\(commit.prefix(12))"
      if FileManager.default.isExecutableFile(atPath: binary) {
        cached = binary
        return binary
      }
      let tree = NSTemporaryDirectory() + "msglog-older-" + UUID().uuidString
      let add = runProgram("/usr/bin/git", ["-C", repositoryRoot, "worktree", "add", "--detach", tree, commit + "^"])
      try #require(add.code == 0, "\(add)")
      let scratch = TemporaryDirectory()
      defer {
        _ = runProgram("/usr/bin/git", ["-C", repositoryRoot, "worktree", "remove", "--force", tree])
        try? FileManager.default.removeItem(atPath: tree)
      }
      let build = runToolchain(
        ["swift", "build", "--package-path", tree, "--product", "msglog"], scratch: scratch.path)
      try #require(build.code == 0, "building the older msglog: \(build.stdout.suffix(2000)) \(build.stderr.suffix(2000))")
      try FileManager.default.copyItem(atPath: tree + "/.build/debug/msglog", toPath: binary + ".partial")
      try FileManager.default.moveItem(atPath: binary + ".partial", toPath: binary)
      cached = binary
      return binary
    }
  }

  @Test(arguments: Store.allCases) func anOlderLogIsReadAndWrittenThenMovesOn(_ store: Store) throws {
    let older = try Self.olderBinary()
    let s = Sandbox(store)
    func old(_ args: String...) -> Run { s.run(args, runner: older) }
    var r = old("append", "one")
    #expect(r.code == 0, "\(r)")
    #expect(old("append", "two").code == 0)
    #expect(old("move", "1", "0").code == 0)
    let one = s.run("list").lines[1].split(separator: " ")[1].description
    #expect(old("remove", one).code == 0)
    func format() -> String {
      switch store {
      case .lmdb:
        return python([
          "-c",
          "import lmdb,sys; e=lmdb.open(sys.argv[1],max_dbs=8,readonly=True,lock=False); m=e.open_db(b'meta',create=False); print(e.begin().get(b'format',db=m).decode())",
          s.db,
        ]).stdout
      case .postgres:
        return PostgresCluster.psql(
          "SELECT convert_from(value, 'UTF8') FROM msglog.meta WHERE key = 'schema'", database: s.databaseName!
        ).stdout
      }
    }
    let before = format()
    #expect(before == (store == .lmdb ? "msglog/2\n" : "1\n"), "\(before)")
    // This msglog reads it, and writes it as the older one did.
    #expect(s.run("verify").code == 0)
    #expect(s.run("append", "three").code == 0)
    #expect(s.run("move", "0", "1").code == 0)
    #expect(format() == before)
    r = old("list")
    #expect(r.code == 0 && r.lines.count == 2, "\(r)")
    #expect(old("verify").code == 0)
    // The first edit moves it on; the older msglog then refuses it, changing nothing.
    #expect(s.run("edit", s.run("list").lines[0].split(separator: " ")[1].description, "THREE").code == 0)
    #expect(format() == (store == .lmdb ? "msglog/3\n" : "2\n"))
    let export = s.export()
    for args in [["list"], ["append", "four"], ["verify"]] {
      r = s.run(args, runner: older)
      #expect(r.code == 1, "\(args): \(r)")
      #expect(
        r.stderr.hasPrefix(
          store == .lmdb
            ? "msglog: \(s.db) is not a msglog database (format: 'msglog/3')"
            : "msglog: \(s.shown) was written by a newer msglog (format schema 2; this one knows schema 1)"),
        "\(args): \(r)")
    }
    #expect(s.export() == export)
    r = s.run("list")
    #expect(r.code == 0 && r.lines.map { String($0.split(separator: " ").last!) } == ["THREE", "two"], "\(r)")
    #expect(s.run("verify").code == 0)
  }
}
