import Foundation
import MsglogTestSupport
import Testing

#if canImport(Glibc)
  import Glibc
#endif

/// `purge` on PostgreSQL while others work (SPEC "Forgetting on purpose"):
/// `serve`, a follower and a writer have the log open during the purge;
/// afterwards no file of msglog's relations holds the erased text (after
/// a checkpoint), and nothing they did is lost.
@Suite(.serialized) struct PostgresPurgeTests {
  @Test func noFileHoldsTheTextAfterPurgeWhileOthersWork() throws {
    let s = Sandbox(.postgres)
    let name = s.databaseName!
    let sentinel = "SENTINEL-" + UUID().uuidString
    let before = (0..<300).map { "filler \($0) before" }.joined(separator: "\n")
    #expect(s.run(["append", "--lines"], stdin: Data(before.utf8)).code == 0)
    let secret = s.append("\(sentinel)-ONE", sender: "eve")
    #expect(s.run("edit", secret, "\(sentinel)-TWO " + String(repeating: "\(sentinel)-BIG ", count: 100)).code == 0)
    let after = (0..<300).map { "filler \($0) after" }.joined(separator: "\n")
    #expect(s.run(["append", "--lines"], stdin: Data(after.utf8)).code == 0)
    var r = s.run("erase", secret)
    #expect(r.code == 0 && r.stdout.hasPrefix("erased 1 item (2 events) at seq"), "\(r)")
    // The old row versions are still in the tables' files (before a
    // reader prunes their pages): the test can fail.
    #expect(PostgresCluster.psql("CHECKPOINT", database: name).code == 0)
    #expect(!PostgresCluster.msglogFiles(holding: sentinel, database: name).isEmpty, "the erase left nothing to purge")

    let served = try ServedLog.running(s)
    defer { _ = served.stop() }
    let follower = s.start(["log", "--follow", "--from", "1"])
    defer { if follower.process.isRunning { kill(follower.process.processIdentifier, SIGKILL) } }
    #expect(follower.waitForOutput("filler 299 after"))

    // A writer appends all the while (each append a process of its own).
    let writer = s.start(
      [
        "-c", "for i in $(seq 1 200); do \"$0\" --db \"$1\" append \"writer $i\" >/dev/null || exit 1; done; echo done",
        Sandbox.binary, s.db,
      ],
      runner: "/bin/sh")
    #expect(follower.waitForOutput("writer 5"))
    r = s.run("purge")
    #expect(r.code == 0 && r.stdout.hasPrefix("purged: ") && r.stdout.hasSuffix(" bytes scrubbed\n"), "\(r)")
    // The writer was at work before the purge and still is (200 appends).
    #expect(writer.process.isRunning, "the writer ended before the purge did")
    #expect(writer.waitForOutput("done"))
    let written = writer.finish()
    #expect(written.code == 0, "\(written)")
    #expect(follower.waitForOutput("writer 200"))
    // Whatever they wrote during the purge is there, once each, and the log verifies.
    let reply = served.request("GET", "/api/items")
    #expect(reply.status == 200 && reply.body.contains(#""count":800"#), "\(reply)")
    let texts = s.run("list").stdout.split(separator: "\n").filter { $0.contains("  writer ") }
    #expect(texts.count == 200)
    r = s.run("verify")
    #expect(r.code == 0 && r.stdout.hasPrefix("ok"), "\(r)")
    #expect(PostgresCluster.psql("CHECKPOINT", database: name).code == 0)
    let holding = PostgresCluster.msglogFiles(holding: sentinel, database: name)
    #expect(holding.isEmpty, "\(holding) still hold the erased text")
  }
}
