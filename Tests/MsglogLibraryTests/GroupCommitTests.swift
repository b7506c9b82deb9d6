import Foundation
import Msglog
import MsglogCore
import MsglogTestSupport
import Synchronization
import Testing

#if canImport(Glibc)
  import Glibc
#endif

/// Group commit: writes from many threads of one process, through one
/// `EventLog`, committed together — fewer transactions than writes, each
/// write with its own outcome, a refused one refusing only itself — on
/// both stores, counted by the store itself (LMDB's transaction id, the
/// PostgreSQL transactions that inserted the events).
@Suite(.serialized) struct GroupCommitTests {
  /// The store's own count of write transactions so far: LMDB's last
  /// transaction id (read with Python's lmdb, as a third party), or on
  /// PostgreSQL the transactions that inserted events (each event row's
  /// `xmin`), from `seq` on.
  func transactions(_ s: Sandbox, fromSeq seq: Int) -> Int {
    switch s.store {
    case .lmdb:
      let r = python([
        "-c",
        "import lmdb,sys; print(lmdb.open(sys.argv[1], readonly=True, lock=False, subdir=True).info()['last_txnid'])",
        s.db,
      ])
      return Int(r.stdout.trimmingCharacters(in: .whitespacesAndNewlines)) ?? -1
    case .postgres:
      let name = String(s.db.split(separator: "/").last!)
      let r = PostgresCluster.psql(
        "SELECT count(DISTINCT xmin::text) FROM msglog.events WHERE seq >= \(seq)", database: name)
      return Int(r.stdout.trimmingCharacters(in: .whitespacesAndNewlines)) ?? -1
    }
  }

  /// The write transactions since `before` (`transactions` then): on
  /// LMDB the difference, on PostgreSQL those of the events from `seq` on.
  func transactions(_ s: Sandbox, fromSeq seq: Int, since before: Int) -> Int {
    let after = transactions(s, fromSeq: seq)
    return s.store == .lmdb ? after - before : after
  }

  /// 16 threads, one write each, while another process holds the write
  /// lock: the first thread's transaction waits for the lock, the others
  /// queue behind it, and once the lock is released they commit together.
  /// Four of them are refused (each for its own reason) and refuse only
  /// themselves: the other twelve each get their own outcome, the seqs are
  /// gapless, and the log holds exactly those twelve, in fewer
  /// transactions than writes.
  @Test(arguments: Store.allCases) func writesWaitingTogetherCommitTogether(_ store: Store) throws {
    let s = Sandbox(store)
    s.append("seed")
    s.append("another")
    let log = try EventLog(s.db)
    let before = transactions(s, fromSeq: 3)
    let lock = try WriterLock(s)
    enum Expected { case appended(String), refused(String) }
    let plan: [Expected] = (0..<16).map { n in
      switch n {
      case 3: .refused("no such item")
      case 7: .refused("out of range")
      case 10: .refused("version conflict")
      case 13: .refused("empty stream")
      default: .appended("thread \(n)")
      }
    }
    let results = Mutex<[Int: Result<Outcome?, MsglogError>]>([:])
    let finished = DispatchSemaphore(value: 0)
    let threads = Mutex<[Int: pid_t]>([:])
    /// Whether the threads started so far all sleep (on the lock, or in the queue).
    func allAsleep(_ count: Int) -> Bool {
      let known = threads.withLock { $0 }
      return known.count == count && known.values.allSatisfy { isAsleep(thread: $0) }
    }
    for (n, expected) in plan.enumerated() {
      Thread {
        threads.withLock { $0[n] = currentThreadID() ?? -1 }
        defer { finished.signal() }
        let result = Result { () throws(MsglogError) -> Outcome? in
          do {
            switch (n, expected) {
            case (3, _): return try log.remove(id: ItemID.random())
            case (7, _): return try log.insert("past the end", at: 1000)
            case (10, _): return try log.append("at the wrong version", expectVersion: 999)
            case (13, _): return try log.move(from: 0, to: 1, in: StreamName("empty"))
            case (_, .appended(let text)): return try log.append(text)
            case (_, .refused): return nil
            }
          } catch let error as MsglogError {
            throw error
          } catch {
            throw MsglogError.foreignFailure(type: "\(type(of: error))", words: "\(error)")
          }
        }
        results.withLock { $0[n] = result }
      }.start()
      // The first one takes the lead (and waits for the lock); the rest queue behind it.
      if n == 0 { #expect(waitUntilThreads { allAsleep(1) }) }
    }
    // Every one asleep: the lead on the lock, the others in the queue.
    #expect(waitUntilThreads { allAsleep(plan.count) })
    lock.release()
    for _ in plan { finished.wait() }
    let outcomes = results.withLock { $0 }
    var seqs: [UInt64] = []
    for (n, expected) in plan.enumerated() {
      switch (expected, outcomes[n]) {
      case (.appended(let text), .success(let outcome?)?):
        seqs.append(outcome.event.seq)
        if case .insert(_, _, let stored, _) = outcome.event.op {
          #expect(stored == text, "thread \(n) got another thread's outcome")
        }
      case (.refused(let why), .failure(let error)?):
        let matches: Bool
        switch error {
        case .noSuchItem: matches = why == "no such item"
        case .insertOutOfRange: matches = why == "out of range"
        case .versionConflict: matches = why == "version conflict"
        case .emptyStream: matches = why == "empty stream"
        default: matches = false
        }
        #expect(matches, "thread \(n) (\(why)) failed with \(error)")
      default:
        Issue.record("thread \(n): expected \(expected), got \(String(describing: outcomes[n]))")
      }
    }
    #expect(seqs.sorted() == Array(3...14), "seqs \(seqs.sorted())")
    let texts = s.run(["log", "--json"]).lines.compactMap { line in
      (try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])?["text"] as? String
    }
    #expect(Set(texts.dropFirst(2)) == Set((0..<16).filter { ![3, 7, 10, 13].contains($0) }.map { "thread \($0)" }))
    #expect(texts.count == 14)
    let used = transactions(s, fromSeq: 3, since: before)
    #expect(used >= 1 && used < 12, "12 writes took \(used) transactions")
    print("group commit (\(store)): 16 writes, 4 refused, the 12 others in \(used) transactions")
    #expect(s.run("verify").code == 0)
  }

  /// 16 threads appending as fast as they can through one `EventLog`:
  /// fewer transactions than appends (printed), every seq once.
  @Test(arguments: Store.allCases) func busyThreadsShareTransactions(_ store: Store) throws {
    let s = Sandbox(store)
    s.append("seed")
    let log = try EventLog(s.db)
    let before = transactions(s, fromSeq: 2)
    let perThread = 40
    let seqs = Mutex<[UInt64]>([])
    onThreads(16) { thread in
      for i in 0..<perThread {
        do {
          let outcome = try log.append("thread \(thread) message \(i)", to: StreamName("s\(thread % 3)"))
          seqs.withLock { $0.append(outcome.event.seq) }
        } catch {
          Issue.record("thread \(thread): \(error)")
        }
      }
    }
    let total = 16 * perThread
    #expect(seqs.withLock { $0.sorted() } == Array(2...UInt64(total + 1)))
    let used = transactions(s, fromSeq: 2, since: before)
    #expect(used >= 1 && used < total, "\(total) appends took \(used) transactions")
    print("group commit (\(store)): \(total) appends from 16 threads in \(used) transactions")
    #expect(s.run("verify").code == 0)
  }

  // MARK: - Writes answered by the committing thread

  /// An append answered later (`perform(_:buildingHere:then:)`, as a
  /// server's writes are): returns at once, its outcome handed to `done`.
  static func appendAnswered(
    _ log: EventLog, _ text: String, buildingHere: Bool = true,
    then done: @escaping @Sendable (Result<Outcome, any Error>) -> Void
  ) throws {
    let batch = try WriteBatch([WriteRequest(stream: .main, command: .insert(InsertRequest(text: text)))])
    log.perform(batch, buildingHere: buildingHere) { result in done(result.map { $0[0]! }) }
  }

  /// 16 writes answered later and 8 threads waiting in `append`, while
  /// another process holds the write lock: the first answered write's call
  /// builds its batch and waits for the lock; the other answered writes'
  /// calls return (half of them may not build, as an event loop's: a
  /// batch they find due goes to a spare thread). Once the lock is let go
  /// each write is answered exactly once, with its own outcome, in fewer
  /// transactions than writes.
  @Test(arguments: Store.allCases) func answeredWritesReturnAtOnceAndCommitTogether(_ store: Store) throws {
    let s = Sandbox(store)
    s.append("seed")
    let log = try EventLog(s.db)
    // Read once, so that no call waits for the lead's first opening of the tables.
    _ = try log.headSeq()
    let before = transactions(s, fromSeq: 2)
    let lock = try WriterLock(s)
    let answers = Mutex<[String: [Result<Outcome, any Error>]]>([:])
    @Sendable func answer(_ text: String) -> @Sendable (Result<Outcome, any Error>) -> Void {
      { result in answers.withLock { $0[text, default: []].append(result) } }
    }
    let lead = Mutex<pid_t>(-1)
    Thread {
      lead.withLock { $0 = currentThreadID() ?? -1 }
      try! Self.appendAnswered(log, "answered 0", then: answer("answered 0"))
    }.start()
    #expect(
      waitUntilThreads {
        let tid = lead.withLock { $0 }; return tid > 0 && isAsleep(thread: tid)
      })
    // Each returns while the lock is held (a call that waited would hang here).
    onThreads(15) { n in
      try! Self.appendAnswered(log, "answered \(n + 1)", buildingHere: n % 2 == 0, then: answer("answered \(n + 1)"))
    }
    let waited = DispatchSemaphore(value: 0)
    for n in 0..<8 {
      Thread {
        defer { waited.signal() }
        let text = "waited \(n)"
        answer(text)(Result { try log.append(text) })
      }.start()
    }
    #expect(answers.withLock { $0.isEmpty }, "answered before the commit")
    lock.release()
    for _ in 0..<8 { waited.wait() }
    #expect(waitUntilThreads { answers.withLock { $0.count } == 24 })
    let all = answers.withLock { $0 }
    var seqs: [UInt64] = []
    for text in (0..<16).map({ "answered \($0)" }) + (0..<8).map({ "waited \($0)" }) {
      guard let got = all[text], got.count == 1, case .success(let outcome) = got[0] else {
        Issue.record("\(text) was answered \(all[text]?.count ?? 0) times: \(String(describing: all[text]))")
        continue
      }
      seqs.append(outcome.event.seq)
      if case .insert(_, _, let stored, _) = outcome.event.op {
        #expect(stored == text, "\(text) got another write's outcome")
      }
    }
    #expect(seqs.sorted() == Array(2...25), "seqs \(seqs.sorted())")
    let used = transactions(s, fromSeq: 2, since: before)
    #expect(used >= 1 && used < 24, "24 writes took \(used) transactions")
    #expect(s.run("verify").code == 0)
  }

  /// Clients, each sending its next write once the last is answered (as
  /// a browser or a script does through a server) — half of them from a
  /// thread that may not build a batch, as an event loop — beside threads
  /// that wait in `append`, all at once: every write answered exactly
  /// once with its own outcome, every seq once, fewer transactions than
  /// writes.
  @Test(arguments: Store.allCases) func answeredAndWaitingWritesShareTransactions(_ store: Store) throws {
    let s = Sandbox(store)
    s.append("seed")
    let log = try EventLog(s.db)
    let before = transactions(s, fromSeq: 2)
    let perClient = 30
    let texts = Mutex<[UInt64: String]>([:])
    let answered = Mutex<[String: Int]>([:])
    let failures = Mutex<[String]>([])
    let clientsDone = DispatchSemaphore(value: 0)
    for client in 0..<8 {
      Thread {
        defer { clientsDone.signal() }
        for i in 0..<perClient {
          let text = "client \(client) write \(i)"
          let reply = DispatchSemaphore(value: 0)
          do {
            try Self.appendAnswered(log, text, buildingHere: client % 2 == 0) { result in
              answered.withLock { $0[text, default: 0] += 1 }
              switch result {
              case .success(let outcome): texts.withLock { $0[outcome.event.seq] = text }
              case .failure(let error): failures.withLock { $0.append("\(text): \(error)") }
              }
              reply.signal()
            }
          } catch {
            failures.withLock { $0.append("\(text): \(error)") }
            return
          }
          reply.wait()
        }
      }.start()
    }
    onThreads(8) { thread in
      for i in 0..<perClient {
        let text = "thread \(thread) write \(i)"
        do {
          let outcome = try log.append(text)
          texts.withLock { $0[outcome.event.seq] = text }
          answered.withLock { $0[text, default: 0] += 1 }
        } catch {
          failures.withLock { $0.append("\(text): \(error)") }
        }
      }
    }
    for _ in 0..<8 { clientsDone.wait() }
    #expect(failures.withLock { $0 } == [])
    let total = 16 * perClient
    let written = texts.withLock { $0 }
    #expect(written.keys.sorted() == Array(2...UInt64(total + 1)))
    let counts = answered.withLock { $0 }
    #expect(counts.count == total && counts.values.allSatisfy { $0 == 1 }, "a write answered more than once, or never")
    // Each seq holds the text of the write it answered.
    let logged = s.run(["log", "--json"]).lines.compactMap { line -> (UInt64, String)? in
      guard let object = try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any],
        let seq = object["seq"] as? Int, let text = object["text"] as? String
      else { return nil }
      return (UInt64(seq), text)
    }
    #expect(logged.count == total + 1)
    #expect(logged.dropFirst().allSatisfy { written[$0.0] == $0.1 }, "a write was answered with another's outcome")
    let used = transactions(s, fromSeq: 2, since: before)
    #expect(used >= 1 && used < total, "\(total) writes took \(used) transactions")
    print("group commit (\(store)): \(total) writes, half answered later, in \(used) transactions")
    #expect(s.run("verify").code == 0)
  }
}
