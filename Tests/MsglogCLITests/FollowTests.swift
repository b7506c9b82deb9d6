import Foundation
import Msglog
import MsglogTestSupport
import Synchronization
import Testing

#if canImport(Glibc)
  import Glibc
#endif

/// `log --follow` across processes, and `EventLog.follow` as an async sequence.
@Suite struct FollowTests {
  func json(_ line: some StringProtocol) -> [String: Any] {
    (try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any]) ?? [:]
  }

  /// Waits (up to `seconds`) until `condition` holds; false on timeout.
  func eventually(_ seconds: Double = 20, _ condition: () -> Bool) -> Bool {
    let deadline = Date().addingTimeInterval(seconds)
    while Date() < deadline {
      if condition() { return true }
      usleep(10_000)
    }
    return condition()
  }

  /// 4 writer processes and 3 followers on one database: every follower
  /// prints every seq exactly once, in order, and nothing else.
  @Test(arguments: Store.allCases) func everyFollowerSeesEverySeqOnceInOrder(_ store: Store) throws {
    let s = Sandbox(store)
    s.append("seed")
    let perWriter = ProcessInfo.processInfo.environment["MSGLOG_STRESS"] != nil ? 250 : 60
    let total = 1 + 4 * perWriter
    let followers = [
      s.start(["log", "--follow", "--all", "--json", "--from", "1", "--limit", String(total)]),
      s.start(["log", "--follow", "--all", "--json", "--from", "1", "--limit", String(total)]),
      s.start(["log", "-f", "--all", "--from=1", "--limit", String(total)]),
    ]
    // Said after they are done, in the test's own context: an issue
    // recorded on another queue belongs to no test.
    let failures = Mutex<[String]>([])
    let group = DispatchGroup()
    for w in 0..<4 {
      DispatchQueue.global().async(group: group) {
        for i in 0..<perWriter {
          let stream = i % 2 == 0 ? "main" : "w\(w)"
          let r = s.run(["append", "--stream", stream, "writer \(w) message \(i)"])
          if r.code != 0 { failures.withLock { $0.append("writer \(w): \(r)") } }
        }
      }
    }
    group.wait()
    #expect(failures.withLock { $0 }.isEmpty, "\(failures.withLock { $0 })")
    for (n, follower) in followers.enumerated() {
      // Short of its events, it would wait for them for ever.
      let r = follower.finish(endingAfter: 60)
      #expect(r.code == 0 && r.stderr.isEmpty, "follower \(n): \(r.code) \(r.stderr)")
      let seqs = r.lines.map { line -> Int in
        if n < 2 { return json(line)["seq"] as? Int ?? -1 }
        return Int(line.prefix { $0 != " " }) ?? -1
      }
      #expect(
        seqs == Array(1...total),
        "follower \(n) printed \(seqs.count) events, first gap at \(zip(seqs, 1...).first { $0 != $1 }.map { "\($0)" } ?? "none")"
      )
    }
    #expect(s.export().split(separator: "\n").count == total)
  }

  /// Without --from, a follower prints only events committed after it started.
  @Test(arguments: Store.allCases) func withoutFromOnlyNewEvents(_ store: Store) throws {
    let s = Sandbox(store)
    s.append("old one")
    s.append("old two")
    let follower = s.start(["log", "--follow", "--limit", "2"])
    // When it reads the head is its own business: new events are written
    // until it has printed two (its exit is the signal), and the two it
    // printed are new ones, one after the other.
    var written = 0
    while follower.process.isRunning && written < 1_000 {
      written += 1
      s.append("new \(written)")
    }
    let r = follower.finish()
    #expect(r.code == 0, "\(r)")
    let seqs = r.lines.compactMap { $0.split(separator: " ").first.flatMap { UInt64($0) } }
    #expect(seqs.count == 2 && seqs[0] >= 3 && seqs[1] == seqs[0] + 1, "\(r)")
    if let first = seqs.first {
      #expect(r.lines[0].hasSuffix("new \(first - 2)") && r.lines[1].hasSuffix("new \(first - 1)"), "\(r)")
    }
  }

  /// SIGINT and SIGTERM end a follower with exit 0, and it leaves no reader
  /// slot behind (LMDB's reader table is empty afterwards).
  @Test(arguments: [SIGINT, SIGTERM]) func aSignalEndsItCleanly(_ signal: Int32) throws {
    let s = Sandbox()
    s.append("one")
    let follower = s.start(["log", "--follow", "--from", "1"])
    // Once it has printed the history it is following (the signal may come
    // before or while it blocks: either way it must end cleanly).
    #expect(follower.waitForOutput("one\n"))
    kill(follower.process.processIdentifier, signal)
    let r = follower.finish()
    #expect(follower.process.terminationReason == .exit && r.code == 0, "\(r)")
    #expect(r.stdout.hasSuffix("one\n"), "\(r)")
    let readers = python(
      ["-c", "import lmdb, sys; print(lmdb.open(sys.argv[1], max_dbs=8, readonly=True).readers())", s.db])
    #expect(!readers.stdout.contains(String(follower.process.processIdentifier)), "\(readers.stdout)")
  }

  /// A backup put in the database's place by `mv` (or the database
  /// removed): the follower still mapped the old file, whose commits had
  /// ended, and waited in silence while the new one was written to (a
  /// crash-safety tester). It ends with exit 1 and says why, without the
  /// "go on from seq N" a lost connection gets after events were printed:
  /// the seqs there are the new database's. (A file renamed over the data
  /// file wakes it, the old file's link count changing; the directory
  /// moved away, with a backup moved into its place, changes no file: the
  /// directory's own move wakes it, where it waited before.)
  @Test(arguments: ["file", "directory", "removed"]) func aDatabaseReplacedUnderAFollowerEndsIt(_ how: String) throws {
    let s = Sandbox()
    s.append("one")
    let copy = s.dir + "/copy.lmdb"
    #expect(s.run("backup", copy).code == 0)
    let follower = s.start(["log", "--follow", "--from", "1"])
    #expect(follower.waitForOutput("one\n"))
    s.append("two")
    #expect(follower.waitForOutput("two\n"))
    switch how {
    case "file": #expect(rename(copy + "/data.mdb", s.db + "/data.mdb") == 0)
    case "directory":
      #expect(rename(s.db, s.dir + "/old.lmdb") == 0)
      #expect(rename(copy, s.db) == 0)
    default: try FileManager.default.removeItem(atPath: s.db)
    }
    #expect(eventually { !follower.process.isRunning }, "the follower kept waiting on the database it had opened")
    if follower.process.isRunning { kill(follower.process.processIdentifier, SIGKILL) }
    let r = follower.finish()
    #expect(r.code == 1, "\(r)")
    #expect(
      r.stderr == "msglog: the database at \(s.db) was removed or replaced while it was followed\n"
        + "hint: a follower keeps to the database it opened; start it again for the one at that path now\n",
      "\(r)")
  }

  /// A reader that goes away (`msglog log -f | head -1`) ends the follower
  /// quietly with exit 0, even while no event comes.
  @Test(arguments: Store.allCases) func aClosedStdoutEndsIt(_ store: Store) throws {
    let s = Sandbox(store)
    s.append("one")
    let pipe = Pipe()
    let follower = s.start(["log", "--follow", "--from", "1"], stdout: pipe.fileHandleForWriting)
    try pipe.fileHandleForWriting.close()
    _ = pipe.fileHandleForReading.availableData  // the first line: it is following now
    try pipe.fileHandleForReading.close()
    #expect(eventually { !follower.process.isRunning }, "the follower kept running after its reader left")
    if follower.process.isRunning { kill(follower.process.processIdentifier, SIGKILL) }
    let r = follower.finish()
    #expect(follower.process.terminationReason == .exit && r.code == 0 && r.stderr.isEmpty, "\(r)")
  }

  @Test(arguments: Store.allCases) func followRefusesWhatLogRefuses(_ store: Store) {
    let s = Sandbox(store)
    var r = s.run(["log", "--follow"])
    #expect(r.code == 1 && r.stderr.hasPrefix("msglog: no "), "\(r)")
    s.append("x")
    r = s.run(["log", "--follow", "--all", "--stream", "main"])
    #expect(r.code == 64, "\(r)")
    r = s.run(["log", "--follow", "--limit", "0"])
    #expect(r.code == 0 && r.stdout.isEmpty, "\(r)")
  }

  /// The library's follower: an async sequence that sees another thread's
  /// and another process's commits, and stops when its task is cancelled.
  @Test func theAsyncSequenceFollowsAndCancels() async throws {
    let dir = TemporaryDirectory()
    let log = try EventLog(dir.db)
    try log.append("before")
    let collector = Task {
      var seen: [UInt64] = []
      for try await event in log.follow(from: 1) {
        seen.append(event.seq)
        if seen.count == 3 { break }
      }
      return seen
    }
    try log.append("from this process")
    let r = Sandbox().run(["--db", dir.db, "append", "from another process"], useDefaultDB: false)
    #expect(r.code == 0, "\(r)")
    #expect(try await collector.value == [1, 2, 3])
    // A follower whose task is cancelled ends, even with no event coming:
    // cancelled once it has handed out seq 4 (written by another process
    // after it started), while it waits for a 5th that never comes.
    let (received, receipts) = AsyncStream.makeStream(of: UInt64.self)
    let waiting = Task {
      var count = 0
      for try await event in log.follow(from: 4) {
        count += 1
        receipts.yield(event.seq)
      }
      return count
    }
    let another = Sandbox().run(["--db", dir.db, "append", "one more"], useDefaultDB: false)
    #expect(another.code == 0, "\(another)")
    for await seq in received {
      #expect(seq == 4)
      break
    }
    waiting.cancel()
    #expect(try await waiting.value == 1)
  }

  /// The async follower reads the log as its consumer asks, a batch at a
  /// time, never ahead of it: a record damaged after the first event was
  /// taken is met when the consumer gets there. (A follower that read ahead
  /// into an unbounded buffer would already hold every event and serve the
  /// damaged one from memory.)
  @Test func theAsyncFollowerReadsNoMoreThanABatchAhead() async throws {
    let dir = TemporaryDirectory()
    let log = try EventLog(dir.db)
    try log.append(contentsOf: (1...3000).map { NewItem("message \(100_000 + $0)") })
    var events = log.follow(from: 1).makeAsyncIterator()
    #expect(try await events.next()?.seq == 1)
    // No wait here for a follower that would read ahead: how much it holds
    // is counted below (`held`), whatever the time; this part shows the
    // consumer meets the damage where it is.
    try flipFirstByte(of: "message 102500", in: dir.db + "/data.mdb")
    var seen: UInt64 = 1
    do {
      while let event = try await events.next() {
        seen = event.seq
        if seen == 3000 { break }
      }
      Issue.record("the follower served seq 2500 after its record was damaged")
    } catch MsglogError.corruptedRecord(let seq, _) {
      #expect(seq == 2500)
      // Everything of the batches before the damaged one.
      #expect(seen >= 1024 && seen < 2500, "\(seen)")
    }
    // The follower itself holds one batch at most.
    let follower = LogFollower(log: log, from: 1, stream: nil)
    #expect(try await follower.next()?.seq == 1)
    #expect(follower.held == 1023)
  }

  /// A write by another process wakes a follower once, for its commit:
  /// not for the transaction that opens the log for writing (it changes
  /// nothing), nor for LMDB's own page writes before the commit can be
  /// read. Every wake is a read of the log; the follower counts them.
  /// Each write starts once the follower has handed out the one before and
  /// gone back to waiting, so it sees each signal of the write by itself
  /// (a signal it took together with another would only make fewer).
  @Test func aWriteWakesAFollowerOnce() async throws {
    let s = Sandbox(.lmdb)
    s.append("seed")
    let log = try EventLog(s.db)
    let follower = LogFollower(log: log, from: 2, stream: nil)
    let writes = 8
    for n in 1...writes {
      async let next = follower.next()
      let writer = s.start(["append", "message \(n)"])
      #expect(try await next?.seq == UInt64(n + 1))
      #expect(writer.finish().code == 0)
    }
    #expect(follower.wakes <= writes, "\(follower.wakes) wakes for \(writes) writes")
  }

  /// `followHead` (what the server's commit hub runs) reports the head as
  /// writers in other processes move it: rising, each a head that was
  /// committed, the last one the log's last; a `stop` descriptor ends it.
  @Test(arguments: Store.allCases) func aHeadFollowerSeesTheHeadRise(_ store: Store) throws {
    let s = Sandbox(store)
    s.append("seed")
    let log = try EventLog(s.db)
    var ends: [Int32] = [-1, -1]
    #expect(pipe(&ends) == 0)
    defer { for end in ends { close(end) } }
    let stop = FollowStop(fileDescriptor: ends[0], whenReadable: true)
    let heads = Mutex<[UInt64]>([])
    let ended = DispatchSemaphore(value: 0)
    let follower = Thread {
      defer { ended.signal() }
      do {
        try log.followHead(after: 1, stop: [stop]) { head in
          heads.withLock { $0.append(head) }
          return true
        }
      } catch { Issue.record("followHead: \(error)") }
    }
    follower.start()
    let group = DispatchGroup()
    for w in 0..<3 {
      DispatchQueue.global().async(group: group) {
        for i in 0..<5 {
          let r = s.run(["append", "writer \(w) message \(i)"])
          if r.code != 0 { Issue.record("writer \(w): \(r)") }
        }
      }
    }
    group.wait()
    #expect(eventually { heads.withLock { $0.last } == 16 }, "heads seen: \(heads.withLock { $0 })")
    #expect(write(ends[1], "x", 1) == 1)
    #expect(ended.wait(timeout: .now() + 20) == .success, "the stop descriptor ended the follower")
    let seen = heads.withLock { $0 }
    #expect(zip(seen, seen.dropFirst()).allSatisfy { $0 < $1 }, "\(seen)")
    #expect(seen.allSatisfy { (2...16).contains($0) }, "\(seen)")
  }

  /// Flips one bit of the first copy of `marker` in a file, in place (the
  /// file stays the one LMDB has mapped).
  func flipFirstByte(of marker: String, in path: String) throws {
    let data = try Data(contentsOf: URL(fileURLWithPath: path))
    let range = try #require(data.range(of: Data(marker.utf8)))
    let file = try FileHandle(forUpdating: URL(fileURLWithPath: path))
    defer { try? file.close() }
    try file.seek(toOffset: UInt64(range.lowerBound - data.startIndex))
    try file.write(contentsOf: [data[range.lowerBound] ^ 0x20])
  }
}
