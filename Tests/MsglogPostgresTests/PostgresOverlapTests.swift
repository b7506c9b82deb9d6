import Foundation
import Msglog
import MsglogLoopback
import MsglogTestSupport
import Synchronization
import Testing

@testable import MsglogPostgres

#if canImport(Glibc)
  import Glibc
#endif

/// A long-running process's group commit overlaps its commits on
/// PostgreSQL: the next batch is sent while the last one's commit flushes,
/// and waits at the head row's lock for it (`PostgresStore.write(…whenSent:…)`).
/// Whatever stops in the middle — the process, the server — seqs stay
/// gapless and nothing acknowledged is lost.
@Suite(.serialized) struct PostgresOverlapTests {
  /// What the writers were told: each acknowledged append's seq and text.
  struct Acknowledged {
    var writes: [(seq: Int, text: String)] = []
    var failures = 0
  }

  /// Shared by the writers' threads; `wait(until:)` returns once so many
  /// appends are acknowledged.
  final class Acknowledgements: Sendable {
    private let state = Mutex(Acknowledged())
    private let waiters = Mutex<[(count: Int, reached: DispatchSemaphore)]>([])

    func read<R: Sendable>(_ body: (Acknowledged) -> R) -> R { state.withLock { body($0) } }
    func failed() { state.withLock { $0.failures += 1 } }

    func acknowledge(seq: Int, text: String) {
      let count = state.withLock { state in
        state.writes.append((seq, text))
        return state.writes.count
      }
      waiters.withLock { waiters in
        for waiter in waiters where count >= waiter.count { waiter.reached.signal() }
        waiters.removeAll { count >= $0.count }
      }
    }

    func wait(until count: Int) {
      let reached = DispatchSemaphore(value: 0)
      waiters.withLock { waiters in
        if read({ $0.writes.count }) >= count { reached.signal() } else { waiters.append((count, reached)) }
      }
      reached.wait()
    }
  }

  /// `writers` keep-alive connections appending to `port` until `running`
  /// says stop (a failed connection is opened again).
  func write(
    to port: UInt16, writers: Int, tag: String, until running: @escaping @Sendable () -> Bool,
    into acknowledged: Acknowledgements
  ) -> DispatchGroup {
    let group = DispatchGroup()
    for w in 0..<writers {
      DispatchQueue.global().async(group: group) {
        var socket = LoopbackSocket(port: port)
        var i = 0
        while running() {
          let text = "\(tag) w\(w) m\(i)"
          i += 1
          let body = #"{"text":"\#(text)"}"#
          let request =
            "POST /api/append HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: \(body.utf8.count)\r\n\r\n\(body)"
          guard let open = socket, open.send(request) else {
            acknowledged.failed()
            socket = LoopbackSocket(port: port)
            continue
          }
          let answer = open.receive(seconds: 30, until: LoopbackSocket.isWholeAnswer)
          guard answer.text.hasPrefix("HTTP/1.1 200"), let range = answer.text.range(of: #""seq":"#),
            let seq = Int(answer.text[range.upperBound...].prefix { $0.isNumber })
          else {
            // Refused (the server was down) or cut off: not acknowledged.
            acknowledged.failed()
            if answer.closed || !answer.text.hasPrefix("HTTP/1.1") { socket = LoopbackSocket(port: port) }
            continue
          }
          acknowledged.acknowledge(seq: seq, text: text)
        }
      }
    }
    return group
  }

  /// The log as `log --all --json` prints it: seqs in order, and texts.
  func logged(_ s: Sandbox, db: String? = nil) -> [(seq: Int, text: String)] {
    let args = (db.map { ["--db", $0] } ?? []) + ["log", "--all", "--json"]
    return s.run(args, useDefaultDB: db == nil).lines.map { line in
      let object = (try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any]) ?? [:]
      return (object["seq"] as? Int ?? -1, object["text"] as? String ?? "")
    }
  }

  /// Seqs 1…head without a gap, and every acknowledged append at its seq.
  func expectGaplessHolding(_ log: [(seq: Int, text: String)], _ acknowledged: [(seq: Int, text: String)]) {
    #expect(log.map(\.seq) == Array(1...max(log.count, 1)), "seqs are not 1…\(log.count)")
    for write in acknowledged {
      let at = write.seq - 1
      #expect(at < log.count && log[at].text == write.text, "acknowledged seq \(write.seq) (\(write.text)) is lost")
    }
  }

  /// 16 threads of one app sharing an `EventLog`: some of its transactions
  /// were sent while the one before was still committing, and every
  /// outcome the threads got is in the log at its seq, gapless.
  ///
  /// Whether commits overlap on their own depends on timing (a batch is
  /// built early only once as many writes wait as the one in flight
  /// holds), so the test makes one certain: every `COMMIT` waits, in a
  /// deferred trigger, for a lock the test holds — a disk that is slow to
  /// flush. One thread's first append is sent and held there; then the
  /// other fifteen come, and one write waiting behind a batch of one is
  /// enough to build the next batch. Once one is, the lock goes and the
  /// rest run as they come.
  @Test func threadsOfOneAppOverlapTheirCommits() throws {
    let s = Sandbox(.postgres)
    let log = try EventLog(s.db)
    try log.append("seed")
    let flush = try Connection(try PostgresLocation(s.db).conninfo)
    for statement in Self.heldCommits { _ = try flush.execute(statement) }
    _ = try flush.execute("SELECT pg_advisory_lock($1)", [.int64(Self.flushLock)])
    var released = false
    func release() throws {
      guard !released else { return }
      released = true
      _ = try flush.execute("SELECT pg_advisory_unlock($1)", [.int64(Self.flushLock)])
    }
    defer { try? release() }
    let acknowledged = Acknowledgements()
    let finished = DispatchGroup()
    func startWriter(_ t: Int) {
      finished.enter()
      Thread {
        defer { finished.leave() }
        for i in 0..<60 {
          let text = "thread \(t) append \(i)"
          do {
            let outcome = try log.append(text)
            acknowledged.acknowledge(seq: Int(outcome.event.seq), text: text)
          } catch {
            acknowledged.failed()
          }
        }
      }.start()
    }
    let deadline = ContinuousClock.now + .seconds(60)
    startWriter(0)
    let waitingForTheLock = "SELECT count(*)::int8 FROM pg_locks WHERE locktype = 'advisory' AND NOT granted"
    while try flush.execute(waitingForTheLock).int64(0, 0) == 0 && ContinuousClock.now < deadline { usleep(5_000) }
    for t in 1..<16 { startWriter(t) }
    while log.overlappedCommits == 0 && ContinuousClock.now < deadline { usleep(5_000) }
    #expect(log.overlappedCommits > 0, "no transaction was sent while another committed")
    #expect(acknowledged.read { $0.writes.count } == 0, "a write was acknowledged before its commit ended")
    try release()
    finished.wait()
    _ = try flush.execute("DROP TRIGGER held_commit ON msglog.events")
    _ = try flush.execute("DROP FUNCTION public.held_commit()")
    #expect(acknowledged.read { $0.failures } == 0)
    expectGaplessHolding(logged(s), acknowledged.read { $0.writes })
    #expect(s.run("verify").code == 0)
  }

  /// The advisory lock a held `COMMIT` waits for.
  static let flushLock: Int64 = 0x6d73_676c

  /// A commit that writes an event waits, as it ends, for `flushLock`
  /// (shared: once it is free, every commit passes at once).
  static let heldCommits = [
    """
    CREATE FUNCTION public.held_commit() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN PERFORM pg_advisory_xact_lock_shared(\(flushLock)); RETURN NULL; END $$
    """,
    """
    CREATE CONSTRAINT TRIGGER held_commit AFTER INSERT ON msglog.events
      DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION public.held_commit()
    """,
  ]

  /// `serve` killed with SIGKILL while 12 clients append (its commits
  /// overlapping), then started again: every append it acknowledged is in
  /// the log at its seq, seqs are gapless, `verify` finds the derived
  /// tables right, and the next serve goes on the same way.
  @Test func aServeKilledMidWriteLosesNothingAcknowledged() throws {
    let s = Sandbox(.postgres)
    s.append("seed")
    let acknowledged = Acknowledgements()
    for round in 0..<2 {
      let served = try ServedLog.running(s)
      let running = Atomic(true)
      let before = acknowledged.read { $0.writes.count }
      let group = write(
        to: served.port, writers: 12, tag: "round \(round)", until: { running.load(ordering: .relaxed) },
        into: acknowledged)
      acknowledged.wait(until: before + 400)
      kill(served.pid, SIGKILL)
      _ = served.child.finish()
      running.store(false, ordering: .relaxed)
      group.wait()
      expectGaplessHolding(logged(s), acknowledged.read { $0.writes })
      #expect(s.run("verify").code == 0, "round \(round)")
    }
    print(
      "postgres: serve killed twice under 12 writers: \(acknowledged.read { $0.writes.count }) acknowledged, all present"
    )
  }

  /// The PostgreSQL server stops at once (`pg_ctl stop -m immediate`)
  /// while 12 clients append through one `serve`, and comes back: the
  /// writes in flight fail (none is acknowledged that was not durable),
  /// the serve writes again after the restart, seqs are gapless, and every
  /// acknowledged append is there. On a server of the test's own.
  @Test func theServerCrashingUnderOverlappedCommitsLosesNothingAcknowledged() throws {
    let server = PostgresServer.primary()
    defer { server.stop() }
    #expect(server.psql("CREATE DATABASE overlap").code == 0)
    let db = server.url(of: "overlap")
    let s = Sandbox()
    #expect(s.run(["--db", db, "append", "seed"], useDefaultDB: false).code == 0)
    let served = ServedLog(s, ["--db", db], useDefaultDB: false)
    defer { _ = served.stop() }
    #expect(served.port != 0, "serve did not start")
    let acknowledged = Acknowledgements()
    let running = Atomic(true)
    let group = write(
      to: served.port, writers: 12, tag: "crash", until: { running.load(ordering: .relaxed) }, into: acknowledged)
    acknowledged.wait(until: 400)
    #expect(server.control("crash") == 0)
    let atCrash = acknowledged.read { $0.writes.count }
    #expect(server.control("restart") == 0)
    // The writers go on through the same serve: 200 more acknowledged.
    acknowledged.wait(until: atCrash + 200)
    running.store(false, ordering: .relaxed)
    group.wait()
    #expect(acknowledged.read { $0.failures } > 0, "no write was in flight when the server stopped")
    expectGaplessHolding(logged(s, db: db), acknowledged.read { $0.writes })
    #expect(s.run(["--db", db, "verify"], useDefaultDB: false).code == 0)
    print("postgres crash under serve: \(atCrash) acknowledged before it, all present")
  }
}
