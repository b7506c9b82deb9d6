import Foundation
import MsglogTestSupport
import Testing

/// `verify` on PostgreSQL at scale: rows read in batches (its round trips
/// do not grow with the number of ids or tree nodes), and rows that
/// nothing refers to found by counting.
@Suite struct PostgresVerifyTests {
  static func name(of s: Sandbox) -> String { s.databaseName! }

  /// `verify` of 20,000 events (about 12,000 ids, trees of several levels)
  /// sends a few hundred messages to the server, not one per id (counted
  /// by strace: the `sendto` calls of the whole process).
  @Test func verifyReadsInBatches() throws {
    let s = Sandbox(.postgres)
    #expect(s.run(["import"], stdin: Data(PostgresTests.generatedLog(events: 20_000).utf8)).code == 0)
    let trace = s.dir + "/strace.txt"
    let r = s.run(
      ["-f", "-c", "-e", "trace=sendto", "-o", trace, Sandbox.binary, "verify"], runner: "/usr/bin/strace")
    #expect(r.code == 0 && r.stdout.hasPrefix("ok: 20000 events"), "\(r)")
    let summary = (try? String(contentsOfFile: trace, encoding: .utf8)) ?? ""
    let calls = summary.split(separator: "\n").first { $0.contains("sendto") }
      .flatMap { Int($0.split(separator: " ", omittingEmptySubsequences: true)[3]) }
    #expect(calls != nil && calls! < 500, "verify sent \(calls ?? -1) messages: \(summary)")
    print("postgres verify of 20,000 events: \(calls ?? -1) sendto calls")
  }

  /// A row that nothing refers to, put into a derived table behind
  /// msglog's back: `verify` finds it by the table's row count (exit 1,
  /// naming the table), and `verify --repair` removes it.
  @Test(arguments: [
    ("ids", "INSERT INTO msglog.ids VALUES ('00000000-0000-4000-8000-000000000001', '\\x00')"),
    ("order", "INSERT INTO msglog.nodes VALUES ('main'::bytea, 999999, '\\x00')"),
  ])
  func strayRowsAreFound(_ table: String, _ sql: String) throws {
    let s = Sandbox(.postgres)
    for n in 0..<5 { s.append("message \(n)") }
    #expect(PostgresCluster.psql(sql, database: Self.name(of: s)).code == 0)
    let r = s.run(["verify"])
    #expect(r.code == 1 && r.stdout.contains("table \(table): "), "\(r)")
    #expect(s.run(["verify", "--repair"]).code == 0)
    let after = s.run(["verify"])
    #expect(after.code == 0, "\(after)")
  }

  /// A head row for a stream that has no events, put in behind msglog's
  /// back, is named for what it is (not as other streams' checkpoints
  /// gone missing, as when one row's value hid every row's name).
  @Test func aHeadForNoStreamIsNamed() throws {
    let s = Sandbox(.postgres)
    for n in 0..<5 { s.append("message \(n)") }
    let copy =
      "INSERT INTO msglog.streams (stream, root, head) SELECT 'ghost'::bytea, root, head FROM msglog.streams "
      + "WHERE stream = 'main'::bytea"
    #expect(PostgresCluster.psql(copy, database: Self.name(of: s)).code == 0)
    let r = s.run(["verify"])
    #expect(r.code == 1 && r.stdout == "table heads: stream 'ghost' has a head but no events\n", "\(r)")
    #expect(s.run(["verify", "--repair"]).code == 0)
    let after = s.run(["verify"])
    #expect(after.code == 0, "\(after)")
  }
}
