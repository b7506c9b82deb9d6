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

    // A writer appends all the while (each append a process of its own),
    // until it is told to stop after the purge.
    let stop = s.dir + "/stop-writing"
    let writer = s.start(
      [
        "-c",
        "i=0; while [ ! -e \"$2\" ]; do i=$((i+1)); \"$0\" --db \"$1\" append \"writer $i\" >/dev/null || exit 1; done; echo \"done $i\"",
        Sandbox.binary, s.db, stop,
      ],
      runner: "/bin/sh")
    #expect(follower.waitForOutput("writer 5"))
    r = s.run("purge")
    #expect(r.code == 0 && r.stdout.hasPrefix("purged: ") && r.stdout.hasSuffix(" bytes scrubbed\n"), "\(r)")
    #expect(writer.process.isRunning, "the writer stopped on its own: \(writer.finish())")
    #expect(FileManager.default.createFile(atPath: stop, contents: nil))
    #expect(writer.waitForOutput("done"))
    let written = writer.finish()
    let count =
      Int(written.stdout.split(separator: " ").last?.trimmingCharacters(in: .whitespacesAndNewlines) ?? "") ?? 0
    #expect(written.code == 0 && count >= 5, "\(written)")
    #expect(follower.waitForOutput("writer \(count)"))
    // Whatever they wrote during the purge is there, once each, and the log verifies.
    let reply = served.request("GET", "/api/items")
    #expect(reply.status == 200 && reply.body.contains(#""count":\#(600 + count)"#), "\(reply)")
    let texts = s.run("list").stdout.split(separator: "\n").filter { $0.contains("  writer ") }
    #expect(texts.count == count)
    r = s.run("verify")
    #expect(r.code == 0 && r.stdout.hasPrefix("ok"), "\(r)")
    #expect(PostgresCluster.psql("CHECKPOINT", database: name).code == 0)
    let holding = PostgresCluster.msglogFiles(holding: sentinel, database: name)
    #expect(holding.isEmpty, "\(holding) still hold the erased text")
  }

  /// The planner's statistics hold no record: ANALYZE of a database
  /// msglog made samples none, and of one made before (whose records it
  /// sampled, texts and senders in `pg_statistic`) `purge` drops them and
  /// rewrites `pg_statistic`'s file, where an erase could not reach them.
  @Test func thePlannersStatisticsHoldNoErasedText() throws {
    let s = Sandbox(.postgres)
    let name = s.databaseName!
    // Texts that share nothing: PostgreSQL compresses a statistics row that
    // shrinks by a quarter, and a text repeated in it would not be found.
    let texts = (0..<300).map { _ in (0..<12).map { _ in UUID().uuidString }.joined() }
    let sender = "STATS-" + UUID().uuidString
    let lines = Data(texts.joined(separator: "\n").utf8)
    #expect(s.run(["append", "--lines", "--sender", sender], stdin: lines).code == 0)
    let sampled = """
      SELECT count(*) FROM pg_stats WHERE schemaname = 'msglog' AND tablename = 'events' AND attname = 'record'
      """
    #expect(PostgresCluster.psql("ANALYZE msglog.events", database: name).code == 0)
    #expect(PostgresCluster.psql(sampled, database: name).stdout.hasPrefix("0"))
    // A database made before: its records sampled, as autovacuum would.
    let before = "ALTER TABLE msglog.events ALTER COLUMN record SET STATISTICS -1; ANALYZE msglog.events"
    #expect(PostgresCluster.psql(before, database: name).code == 0)
    #expect(PostgresCluster.psql(sampled, database: name).stdout.hasPrefix("1"))
    #expect(PostgresCluster.psql("CHECKPOINT", database: name).code == 0)
    func holding() -> [String] {
      PostgresCluster.statisticsFiles(database: name).filter { path in
        guard let bytes = FileManager.default.contents(atPath: path) else { return false }
        return texts.contains { bytes.range(of: Data($0.utf8)) != nil }
      }
    }
    #expect(!holding().isEmpty, "ANALYZE sampled no text: the test cannot fail")
    var r = s.run("erase", "--sender", sender)
    #expect(r.code == 0 && r.stdout.hasPrefix("erased 300 items"), "\(r)")
    r = s.run("purge")
    #expect(r.code == 0, "\(r)")
    #expect(PostgresCluster.psql("CHECKPOINT", database: name).code == 0)
    #expect(PostgresCluster.psql(sampled, database: name).stdout.hasPrefix("0"))
    #expect(holding().isEmpty, "\(holding()) still hold the erased text")
    // And ANALYZE samples none from then on.
    #expect(PostgresCluster.psql("ANALYZE msglog.events", database: name).code == 0)
    #expect(PostgresCluster.psql(sampled, database: name).stdout.hasPrefix("0"))
    #expect(s.run("verify").code == 0)
  }

  /// The erase leaves the old row version in the table's file; after
  /// `purge` (VACUUM FULL of msglog's tables, CHECKPOINT) no file of
  /// msglog's tables, their TOAST tables and their indexes holds the text
  /// (what SPEC asks; the planner's statistics are not msglog's:
  /// REFERENCE.md says what purge cannot reach).
  @Test func noFileOfMsglogsTablesHoldsTheErasedText() throws {
    let s = Sandbox(.postgres)
    let name = s.databaseName!
    let sentinel = "SENTINEL-" + UUID().uuidString
    let filler = (0..<300).map { "filler \($0)" }.joined(separator: "\n")
    #expect(s.run(["append", "--lines"], stdin: Data(filler.utf8)).code == 0)
    let secret = s.append("\(sentinel)-ONE", sender: "eve")
    // Past 2 kB: in the TOAST table (varied, so that compression keeps the sentinel's bytes).
    let big = (0..<300).map { "\(sentinel)-BIG-\($0)" }.joined(separator: " ")
    #expect(s.run("edit", secret, big).code == 0)
    #expect(s.run(["append", "--lines"], stdin: Data(filler.utf8)).code == 0)
    #expect(s.run("erase", secret).code == 0)
    #expect(PostgresCluster.psql("CHECKPOINT", database: name).code == 0)
    // The old row version is still in the table's file: the test can fail.
    #expect(!PostgresCluster.msglogFiles(holding: "\(sentinel)-ONE", database: name).isEmpty)
    let r = s.run("purge")
    #expect(r.code == 0 && r.stdout.hasPrefix("purged: "), "\(r)")
    let holding = PostgresCluster.msglogFiles(holding: sentinel, database: name)
    #expect(holding.isEmpty, "\(holding) still hold it")
    #expect(s.run("verify").code == 0)
    #expect(s.run("list").stdout.split(separator: "\n").count == 600)
  }

  /// A snapshot taken before the erase committed (here a report in the
  /// same database that reads no table of msglog's, so holds no lock
  /// purge waits for; in CI once, most likely an autovacuum's ANALYZE) may
  /// still see the old row version, and `VACUUM FULL` copies it into the
  /// new file for it. Purge waits for such a snapshot to end; one that
  /// outlasts the wait is named, and a purge once it has ended leaves no
  /// file holding the text.
  /// A session that keeps a lock on msglog's tables (an application idle
  /// in a transaction that read them, newer than the erase) does not hold
  /// purge, nor the log, for as long as it lasts: purge's rewrite took the
  /// tables' lock in one request, which waited for that session — and
  /// every reader and writer queued behind it (a `list` took 7 s; `serve`
  /// froze). Now each try queues a moment, and purge fails (exit 1) naming
  /// the session while it is still open; a write meanwhile goes through.
  @Test func aSessionHoldingATablesLockIsNamedNotWaitedFor() throws {
    let s = Sandbox(.postgres)
    let name = s.databaseName!
    let secret = "SENTINEL-" + UUID().uuidString
    s.append("before")
    #expect(s.run("erase", s.append(secret)).code == 0)
    // Idle in its transaction between statements, as an application is:
    // it holds the table's lock and no snapshot older than the purge.
    let holder = try PostgresTransaction(url: s.db, name: "idle-reader", ["SELECT count(*) FROM msglog.events"])
    let purge = s.start(["purge"])
    // A write while purge tries: not queued behind it for as long as the reader lasts.
    #expect(s.run("append", "during the purge").code == 0)
    let r = purge.finish(endingAfter: 60)
    #expect(holder.isOpen, "purge waited for the reader to end")
    #expect(
      r.code == 1 && r.stderr.contains("idle-reader") && r.stderr.contains("kept a lock on msglog"), "\(r)")
    // Said while it tries, as a snapshot's wait is.
    #expect(
      r.stderr.hasPrefix("msglog: purge waits for pid ")
        && r.stderr.contains(#"which keeps a lock on msglog."events", to end"#), "\(r)")
    holder.end()
    let again = s.run("purge")
    #expect(again.code == 0, "\(again)")
    #expect(PostgresCluster.msglogFiles(holding: secret, database: name).isEmpty)
    #expect(s.run("list").lines.count == 2)
  }

  @Test func aSnapshotOlderThanThePurgeIsWaitedForOrNamed() throws {
    let s = Sandbox(.postgres)
    let name = s.databaseName!
    let filler = (0..<100).map { "filler \($0)" }.joined(separator: "\n")
    #expect(s.run(["append", "--lines"], stdin: Data(filler.utf8)).code == 0)
    func report(seconds: Int) -> Sandbox.Child {
      let sql = """
        SET application_name = 'long-report'; BEGIN ISOLATION LEVEL REPEATABLE READ; \
        SELECT count(*) FROM pg_class; SELECT pg_sleep(\(seconds)); COMMIT
        """
      let child = s.start(["-qAt", s.db, "-c", sql], runner: "/usr/bin/psql")
      let held =
        "SELECT count(*) FROM pg_stat_activity WHERE application_name = 'long-report' AND backend_xmin IS NOT NULL"
      var tries = 0
      while PostgresCluster.psql(held, database: name).stdout != "1\n" && tries < 200 {
        usleep(50_000)
        tries += 1
      }
      #expect(
        tries < 200,
        "the report holds no snapshot: \((try? String(contentsOfFile: child.errPath, encoding: .utf8)) ?? "")")
      return child
    }
    // A report that ends by itself within the wait: purge waits for it.
    let first = "SENTINEL-" + UUID().uuidString
    let shortReport = report(seconds: 3)
    #expect(s.run("erase", s.append(first)).code == 0)
    var r = s.run("purge")
    #expect(r.code == 0 && r.stdout.hasPrefix("purged: "), "\(r)")
    #expect(PostgresCluster.msglogFiles(holding: first, database: name).isEmpty, "purge did not wait for the report")
    _ = shortReport.finish()
    // One that outlasts the wait: named; purge again once it has ended.
    let second = "SENTINEL-" + UUID().uuidString
    let longReport = report(seconds: 300)
    defer { if longReport.process.isRunning { kill(longReport.process.processIdentifier, SIGKILL) } }
    #expect(s.run("erase", s.append(second)).code == 0)
    r = s.run("purge")
    #expect(
      r.code == 1 && r.stderr.contains("long-report") && r.stderr.contains("run purge again once it has ended"),
      "\(r)")
    #expect(r.stderr.hasPrefix("msglog: purge waits for "), "\(r)")
    #expect(!PostgresCluster.msglogFiles(holding: second, database: name).isEmpty, "the report kept nothing")
    let ended = "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = 'long-report'"
    #expect(PostgresCluster.psql(ended, database: name).code == 0)
    _ = longReport.finish()
    r = s.run("purge")
    #expect(r.code == 0, "\(r)")
    #expect(PostgresCluster.msglogFiles(holding: second, database: name).isEmpty)
    // A session idle in a transaction that wrote before the erase holds
    // no snapshot between statements, only its xid: it counts as well
    // (purge waits for it and says so; held until then, not past the
    // wait, as other tests' purges on the cluster wait for it too).
    let third = "SENTINEL-" + UUID().uuidString
    let idle = try Self.idleWriter(url: s.db, name: "idle-writer")
    defer { idle.end() }
    #expect(s.run("erase", s.append(third)).code == 0)
    let purge = s.start(["purge"])
    #expect(Self.saysItWaits(purge), "purge did not wait: \(purge.finish())")
    idle.end()
    r = purge.finish()
    #expect(r.code == 0, "\(r)")
    #expect(PostgresCluster.msglogFiles(holding: third, database: name).isEmpty)
    #expect(s.run("verify").code == 0)
    #expect(s.run("list").stdout.split(separator: "\n").count == 100)
  }

  /// A transaction of another database on the same server that wrote
  /// before the erase is still running: it holds no snapshot here, but
  /// every snapshot taken here while it runs — `VACUUM FULL`'s own among
  /// them — counts it as running, so the erased row version is "recently
  /// dead" to the rewrite and copied into the new file (seen in CI, where
  /// other tests' databases share the cluster). Purge waits for it, and
  /// says so. It is held until then, not past the wait: other tests'
  /// purges on the cluster wait for it too.
  @Test func aWritingTransactionOfAnotherDatabaseIsWaitedFor() throws {
    let s = Sandbox(.postgres)
    let name = s.databaseName!
    let other = PostgresCluster.createDatabase()
    defer { PostgresCluster.dropDatabase(other.name) }
    #expect(s.run(["append", "--lines"], stdin: Data("one\ntwo\nthree".utf8)).code == 0)
    let holder = try Self.idleWriter(url: other.url, name: "other-database-writer")
    defer { holder.end() }
    let sentinel = "SENTINEL-" + UUID().uuidString
    #expect(s.run("erase", s.append(sentinel)).code == 0)
    let purge = s.start(["purge"])
    #expect(Self.saysItWaits(purge), "purge did not wait: \(purge.finish())")
    holder.end()
    let r = purge.finish()
    #expect(r.code == 0, "\(r)")
    #expect(PostgresCluster.msglogFiles(holding: sentinel, database: name).isEmpty)
    #expect(s.run("verify").code == 0)
    #expect(s.run("list").stdout.split(separator: "\n").count == 3)
  }

  /// Whether `purge` says, within its wait, that it waits (said once, if
  /// the oldest holder is still there after about 300 ms). Not which
  /// holder: on the shared cluster another test's may be the oldest, and
  /// that test lets go of its own only once its purge says it waits.
  static func saysItWaits(_ purge: Sandbox.Child) -> Bool {
    func said() -> Bool {
      ((try? String(contentsOfFile: purge.errPath, encoding: .utf8)) ?? "").contains("msglog: purge waits for ")
    }
    for _ in 0..<300 {
      if said() { return true }
      if !purge.process.isRunning { return said() }
      usleep(50_000)
    }
    return false
  }

  /// A psql session idle in a transaction that has written (it has a
  /// transaction id, as a write gives it) until `end()`.
  static func idleWriter(url: String, name: String) throws -> PostgresTransaction {
    try PostgresTransaction(url: url, name: name, ["SELECT txid_current()"])
  }

  /// `kill -9` in the middle of an erase or a purge on PostgreSQL: the
  /// erase is done whole or not at all, the log verifies, and a purge run
  /// again leaves no file holding the text.
  @Test func aKilledEraseOrPurgeLeavesALogThatVerifies() throws {
    let s = Sandbox(.postgres)
    let name = s.databaseName!
    let sentinel = "SENTINEL-" + UUID().uuidString
    // Many of mallory's messages among others: an erase of them takes a while.
    let lines = (0..<3000).map {
      $0 % 3 == 0
        ? #"{"op":"append","text":"\#(sentinel) \#($0)","sender":"mallory"}"#
        : #"{"op":"append","text":"filler \#($0)","sender":"ann"}"#
    }.joined(separator: "\n")
    #expect(s.run(["import"], stdin: Data(lines.utf8)).code == 0)
    // Each kill on a fresh copy of the log (an erase that got through
    // would leave the next round nothing to do).
    var outcomes: [Int] = []
    for delay: useconds_t in [0, 100_000, 400_000, 1_000_000, 2_000_000, 4_000_000] {
      let copy = PostgresCluster.copyDatabase(name)
      defer { PostgresCluster.dropDatabase(copy.name) }
      let erase = s.start(["--db", copy.url, "erase", "--sender", "mallory"])
      usleep(delay)
      kill(erase.process.processIdentifier, SIGKILL)
      _ = erase.finish()
      let r = s.run(["--db", copy.url, "verify"])
      #expect(r.code == 0, "\(r)")
      // All of mallory's items or none: one transaction.
      let log = s.run(["--db", copy.url, "log", "--json"]).stdout
      let erases = log.split(separator: "\n").filter { $0.contains(#""op":"erase""#) }.count
      #expect(erases == 0 || erases == 1000, "\(erases) erases")
      outcomes.append(erases)
    }
    print("killed erases: \(outcomes)")
    #expect(s.run("erase", "--sender", "mallory").code == 0)
    #expect(PostgresCluster.psql("CHECKPOINT", database: name).code == 0)
    #expect(!PostgresCluster.msglogFiles(holding: sentinel, database: name).isEmpty)
    for delay: useconds_t in [0, 50_000, 150_000] {
      let purge = s.start(["purge"])
      usleep(delay)
      kill(purge.process.processIdentifier, SIGKILL)
      _ = purge.finish()
      #expect(s.run("verify").code == 0)
    }
    let r = s.run("purge")
    #expect(r.code == 0, "\(r)")
    #expect(PostgresCluster.msglogFiles(holding: sentinel, database: name).isEmpty)
    #expect(s.run("verify").code == 0)
    #expect(s.run("list").stdout.split(separator: "\n").count == 2000)
  }
}
