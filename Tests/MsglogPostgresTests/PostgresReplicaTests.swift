import Foundation
import Msglog
import MsglogLoopback
import MsglogTestSupport
import Synchronization
import Testing

#if canImport(Glibc)
  import Glibc
#endif

/// Readers on a read replica: a hot standby of the shared cluster, made
/// with `pg_basebackup -R` and started by each test on a port of its own
/// (stopped and removed after). A standby replays the primary's commits
/// but cannot `LISTEN`: followers there poll its head.
@Suite(.serialized) struct PostgresReplicaTests {
  func json(_ line: some StringProtocol) -> [String: Any] {
    (try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any]) ?? [:]
  }

  static func name(of s: Sandbox) -> String { String(s.db.split(separator: "/").last!) }

  /// Waits (a watchdog, not a measure) until the standby has replayed the
  /// primary's head.
  func caughtUp(_ s: Sandbox, _ replica: String) -> Bool {
    let head = s.run(["log", "--all", "--json"]).lines.count
    for _ in 0..<1200 {
      if s.run(["--db", replica, "log", "--all", "--json"], useDefaultDB: false).lines.count == head { return true }
      usleep(25_000)
    }
    return false
  }

  /// 4 writer processes on the primary, 2 followers on the standby: each
  /// follower prints every seq once, in order. On the standby, reads serve
  /// what the primary committed, and a write is refused as a replica's.
  @Test func followersOnAStandbySeeEveryCommitOfThePrimary() throws {
    let s = Sandbox(.postgres)
    s.append("seed")
    let standby = PostgresServer.standbyOfTheSharedCluster()
    defer { standby.stop() }
    let replica = standby.url(of: Self.name(of: s))
    #expect(caughtUp(s, replica), "the standby never replayed the seed")
    let perWriter = 25
    let total = 1 + 4 * perWriter
    let followers = (0..<2).map { _ in
      s.start(
        ["--db", replica, "log", "--follow", "--all", "--json", "--from", "1", "--limit", String(total)],
        useDefaultDB: false)
    }
    DispatchQueue.concurrentPerform(iterations: 4) { w in
      for i in 0..<perWriter {
        let r = s.run(["append", "--stream", i % 2 == 0 ? "main" : "w\(w)", "writer \(w) message \(i)"])
        if r.code != 0 { Issue.record("writer \(w): \(r)") }
      }
    }
    for (n, follower) in followers.enumerated() {
      // A watchdog only: a follower that never ends must not hang the suite.
      let r = follower.finish(endingAfter: 60)
      #expect(r.code == 0 && r.stderr.isEmpty, "follower \(n): \(r.code) \(r.stderr)")
      let seqs = r.lines.map { json($0)["seq"] as? Int ?? -1 }
      #expect(seqs == Array(1...total), "follower \(n) printed \(seqs.count) events of \(total)")
    }
    #expect(caughtUp(s, replica))
    for args in [["list"], ["streams"], ["log", "--all"], ["export"], ["verify"]] {
      let onReplica = s.run(["--db", replica] + args, useDefaultDB: false)
      #expect(onReplica.code == 0 && onReplica.stdout == s.run(args).stdout, "\(args): \(onReplica)")
    }
    let before = s.contents()
    for args in [["append", "x"], ["move", "0", "1"], ["remove", "ffffffff"], ["verify", "--repair"]] {
      let r = s.run(["--db", replica] + args, useDefaultDB: false)
      #expect(
        r.code == 1
          && r.stderr.hasPrefix(
            "msglog: cannot write to \(standby.server.replacing(#/:[^:@/]*@/#, with: "@"))/\(Self.name(of: s)): it is read-only (this server is a read-only replica)\n"),
        "\(args): \(r)")
    }
    #expect(s.contents() == before)
  }

  /// A follower in process on the standby: how long after the primary's
  /// commit returns it sees the event (printed; the standby's replay is
  /// part of it). Asserted: every commit, once, in order.
  @Test func aFollowerOnAStandbyKeepsUpWithThePrimary() throws {
    let s = Sandbox(.postgres)
    s.append("seed")
    let standby = PostgresServer.standbyOfTheSharedCluster()
    defer { standby.stop() }
    let replica = standby.url(of: Self.name(of: s))
    #expect(caughtUp(s, replica))
    let primary = try EventLog(s.db)
    let reader = try EventLog(replica)
    let commits = 60
    let committed = Mutex<[UInt64: ContinuousClock.Instant]>([:])
    let seen = Mutex<[(UInt64, ContinuousClock.Instant)]>([])
    var ends: [Int32] = [0, 0]
    #expect(pipe(&ends) == 0)
    let (stopRead, stopWrite) = (ends[0], ends[1])
    defer { close(stopRead) }
    let follower = Thread {
      do {
        try reader.follow(from: 2, stop: [FollowStop(fileDescriptor: stopRead, whenReadable: true)]) { event in
          seen.withLock { $0.append((event.seq, .now)) }
          return event.seq < UInt64(commits + 1)
        }
      } catch {
        Issue.record("the follower failed: \(error)")
      }
    }
    follower.start()
    for i in 0..<commits {
      let outcome = try primary.append("commit \(i)")
      committed.withLock { $0[outcome.event.seq] = .now }
      // Deliberate: commits spaced as an app's are, so each arrival's delay
      // is measured on its own (the figure printed), not a burst's.
      usleep(UInt32.random(in: 10_000...60_000))
    }
    for _ in 0..<2400 where !follower.isFinished { usleep(10_000) }
    var byte: UInt8 = 1
    _ = write(stopWrite, &byte, 1)
    close(stopWrite)
    while !follower.isFinished { usleep(10_000) }
    let arrivals = seen.withLock { $0 }
    #expect(arrivals.map(\.0) == Array(2...UInt64(commits + 1)), "the follower skipped or repeated a commit")
    let latencies = committed.withLock { times in
      arrivals.compactMap { seq, at in times[seq].map { at - $0 } }.filter { $0 > .zero }.sorted()
    }
    if !latencies.isEmpty {
      print(
        "standby follower: commit on the primary to the event on the standby, \(latencies.count) commits: "
          + "p50 \(latencies[latencies.count / 2]), max \(latencies.last!)")
    }
  }

  /// `serve` on a standby: its event streams deliver a primary's commit
  /// before any keep-alive comment (they are not left to the 15 s
  /// keep-alive), and it opens no new database session while it idles.
  @Test func serveOnAStandbyStreamsEventsAndOpensNoSessions() throws {
    let s = Sandbox(.postgres)
    s.append("seed")
    let standby = PostgresServer.standbyOfTheSharedCluster()
    defer { standby.stop() }
    let database = Self.name(of: s)
    let replica = standby.url(of: database)
    #expect(caughtUp(s, replica))
    let server = ServedLog(s, ["--db", replica], useDefaultDB: false)
    defer { #expect(server.stop().code == 0) }
    var r = server.request("GET", "/api/items")
    #expect(r.status == 200 && r.body.contains("seed"), "\(r)")
    r = server.request("POST", "/api/append", #"{"text":"refused"}"#)
    #expect(r.status == 403 && r.body.contains("this server is a read-only replica"), "\(r)")
    try #require(server.url != nil, "the server printed no address")
    let port = server.port
    let connection = try #require(LoopbackSocket(port: port))
    connection.send("GET /api/follow?from=2 HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n")
    func sessions() -> Int {
      Int(
        standby.psql("SELECT sessions FROM pg_stat_database WHERE datname = '\(database)'").stdout
          .trimmingCharacters(in: .whitespacesAndNewlines)) ?? -1
    }
    // Settled: the stream has its follower; then two quiet seconds.
    _ = connection.receive(seconds: 1)
    let before = sessions()
    _ = connection.receive(seconds: 2)
    let after = sessions()
    #expect(before >= 0 && after == before, "serve opened \(after - before) sessions while idle on the standby")
    s.append("from the primary")
    let received = connection.receive(seconds: 30) { $0.contains("id: 2\n") }.text
    #expect(received.contains("id: 2\n") && received.contains("from the primary"), "\(received)")
    #expect(!received.contains("keep-alive"), "the event waited for a keep-alive: \(received)")
  }

  /// A hot standby cancels a read that holds up the changes it replays (a
  /// recovery conflict; here at once, `max_standby_streaming_delay` 0,
  /// while the primary takes table locks over and over). `serve`'s event
  /// streams read again from where they were instead of being cut: each
  /// of 6 followers from seq 1 gets every event once, and the standby
  /// counts the conflicts (or the test proves nothing).
  @Test func aStandbysCancelledReadsCutNoFollow() throws {
    let s = Sandbox(.postgres)
    let total = 10_000
    let padding = String(repeating: "x", count: 200)
    let lines = (0..<total).map { #"{"op":"append","text":"message \#($0) \#(padding)"}"# }
    let imported = s.run(["import"], stdin: Data((lines.joined(separator: "\n") + "\n").utf8))
    try #require(imported.code == 0, "\(imported)")
    let standby = PostgresServer.standbyOfTheSharedCluster()
    defer { standby.stop() }
    let database = Self.name(of: s)
    let replica = standby.url(of: database)
    #expect(caughtUp(s, replica))
    standby.psql("ALTER SYSTEM SET max_standby_streaming_delay = 0")
    standby.psql("SELECT pg_reload_conf()")
    let server = ServedLog(s, ["--db", replica], useDefaultDB: false)
    defer { #expect(server.stop().code == 0) }
    try #require(server.url != nil, "the server printed no address")

    let following = Atomic(true)
    let locker = Thread {
      let locks = String(
        repeating: "BEGIN; LOCK TABLE msglog.events IN ACCESS EXCLUSIVE MODE; COMMIT; ", count: 20)
      while following.load(ordering: .relaxed) {
        PostgresCluster.psql(locks, database: database)
        usleep(100_000)
      }
    }
    locker.start()
    let seen = Mutex<[[Int]]>(Array(repeating: [], count: 6))
    let port = server.port
    DispatchQueue.concurrentPerform(iterations: 6) { n in
      guard let connection = LoopbackSocket(port: port) else {
        Issue.record("cannot connect")
        return
      }
      _ = connection.send("GET /api/follow?from=1 HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n")
      var seqs: [Int] = []
      var partial: [UInt8] = []
      let deadline = Date().addingTimeInterval(120)  // a watchdog, not a measure
      while seqs.last != total, Date() < deadline {
        guard let bytes = connection.read(atMost: 1 << 16, seconds: 1) else { break }  // cut
        partial += bytes
        while let end = partial.firstIndex(of: 10) {
          let line = String(decoding: partial[..<end], as: UTF8.self)
          partial.removeSubrange(...end)
          if line.hasPrefix("id: "), let seq = Int(line.dropFirst(4)) { seqs.append(seq) }
        }
      }
      seen.withLock { $0[n] = seqs }
    }
    following.store(false, ordering: .relaxed)
    while !locker.isFinished { usleep(10_000) }
    let conflicts = standby.psql(
      "SELECT confl_lock FROM pg_stat_database_conflicts WHERE datname = '\(database)'"
    ).stdout.trimmingCharacters(in: .whitespacesAndNewlines)
    #expect((Int(conflicts) ?? 0) > 0, "the standby cancelled no read: \(conflicts)")
    for (n, seqs) in seen.withLock({ $0 }).enumerated() {
      #expect(
        seqs == Array(1...total), "follower \(n) got \(seqs.count) events of \(total), the last \(seqs.last ?? 0)")
    }
  }
}
