import Foundation
import MsglogTestSupport
import Testing

#if canImport(Glibc)
  import Glibc
#endif

/// `trim` on PostgreSQL where the store shows through (`TrimTests` has the
/// rest, on both stores): what a trim deletes is gone from every file of
/// msglog's tables after `purge` and a checkpoint; `kill -9` mid-trim
/// leaves the log whole, trimmed or not.
@Suite(.serialized) struct PostgresTrimTests {
  @Test func purgeScrubsWhatTrimDroppedFromTheClustersFiles() throws {
    let s = Sandbox(.postgres)
    let name = s.databaseName!
    let sentinel = "SENTINEL-" + UUID().uuidString
    let filler = (0..<200).map { "filler \($0)" }.joined(separator: "\n")
    #expect(s.run(["append", "--lines"], stdin: Data(filler.utf8)).code == 0)
    // One text short (in the row), one past 2 kB (in the TOAST table).
    let short = s.append("\(sentinel)-SHORT")
    let long = s.append("\(sentinel)-LONG " + String(repeating: "x", count: 3000))
    // The kept item has a mark of its own: "KEPT-" + the sentinel, then
    // whatever byte the row's layout puts after it, could read as the
    // sentinel and a "-".
    let keptMark = "KEPT-" + UUID().uuidString
    let kept = s.append(keptMark)
    // An item edited before the horizon: its insert stays, for its sender
    // and time, but not the text the edit replaced.
    let editedMark = "EDITED-" + UUID().uuidString
    let edited = s.append("\(sentinel)-EDITED", sender: "ann")
    #expect(s.run("edit", edited, editedMark).code == 0)
    #expect(s.run("remove", short).code == 0)
    #expect(s.run("remove", long).code == 0)
    #expect(s.run(["append", "--lines"], stdin: Data(filler.utf8)).code == 0)
    let head = 200 + 3 + 2 + 2 + 200
    var r = s.run("trim", "--before", String(head - 10))
    #expect(r.code == 0 && r.stdout == "trimmed \(head - 11) events before seq \(head - 10)\n", "\(r)")
    // The deleted rows are still in the table's files (before any read
    // prunes their pages): the test can fail.
    #expect(PostgresCluster.psql("CHECKPOINT", database: name).code == 0)
    #expect(!PostgresCluster.msglogFiles(holding: sentinel + "-", database: name).isEmpty)
    #expect(!s.export().contains(sentinel + "-"), "the trim left the text in the log")
    r = s.run("purge")
    #expect(r.code == 0 && r.stdout.hasPrefix("purged: "), "\(r)")
    #expect(PostgresCluster.psql("CHECKPOINT", database: name).code == 0)
    let holding = PostgresCluster.msglogFiles(holding: sentinel + "-", database: name)
    #expect(holding.isEmpty, "\(holding) still hold the trimmed text")
    // The kept items are still there, and the log verifies.
    #expect(s.run("list").stdout.contains(String(kept.prefix(8)) + "  -  " + keptMark))
    #expect(s.run("list").stdout.contains(String(edited.prefix(8)) + "  ann  " + editedMark))
    #expect(s.run("verify").code == 0)
  }

  /// `kill -9` during a trim: one transaction, so done whole or not at all.
  @Test func aKilledTrimLeavesALogThatVerifies() throws {
    let s = Sandbox(.postgres)
    let n = 20_000
    let ids = (0..<n).map { _ in UUID().uuidString.lowercased() }
    var lines = (0..<n).map {
      #"{"seq":\#($0 + 1),"stream":"main","version":\#($0 + 1),"time":"2026-01-01T00:00:00.000Z","op":"insert","id":"\#(ids[$0])","index":\#($0),"text":"line \#($0)"}"#
    }
    lines += (0..<5_000).map {
      #"{"seq":\#(n + $0 + 1),"stream":"main","version":\#(n + $0 + 1),"time":"2026-01-01T00:00:00.000Z","op":"remove","id":"\#(ids[$0])"}"#
    }
    var r = s.run(["import"], stdin: Data(lines.joined(separator: "\n").utf8))
    #expect(r.code == 0, "\(r)")
    let list = s.run("list").stdout
    // A trim takes about 0.3 s here (a debug build): kills before, during
    // and after it, each on a fresh copy of the untrimmed log (a trim that
    // got through would leave the next round nothing to do).
    var outcomes: [Substring] = []
    for delay in [UInt32(0), 60_000, 120_000, 180_000, 240_000, 400_000] {
      let copy = PostgresCluster.copyDatabase(s.databaseName!)
      defer { PostgresCluster.dropDatabase(copy.name) }
      let trim = s.start(["--db", copy.url, "trim", "--before", "24000"])
      usleep(delay)
      kill(trim.process.processIdentifier, SIGKILL)
      _ = trim.finish()
      r = s.run(["--db", copy.url, "verify"])
      #expect(r.code == 0, "\(r)")
      #expect(s.run(["--db", copy.url, "list"]).stdout == list)
      // Trimmed or not: the export begins with the bases or with seq 1.
      let first = s.run(["--db", copy.url, "log", "--json"]).stdout.prefix(12)
      #expect(first == #"{"seq":1,"st"# || first == #"{"seq":24000"#, "\(first)")
      outcomes.append(first)
    }
    print("killed trims: \(outcomes.map { $0 == #"{"seq":1,"st"# ? "not trimmed" : "trimmed" })")
    r = s.run("trim", "--before", "24000")
    #expect(r.code == 0, "\(r)")
    r = s.run("verify")
    #expect(r.code == 0, "\(r)")
    #expect(s.run("list").stdout == list)
    #expect(s.run("log", "--json").stdout.hasPrefix(#"{"seq":24000,"#))
  }
}
