import Foundation
import MsglogTestSupport
import Synchronization
import Testing

#if canImport(Glibc)
  import Glibc
#endif

/// What only a server has: many clients at once, a client killed in the
/// middle of a write, the server itself crashing and coming back, and the
/// ways a connection can fail — each against the real throwaway cluster.
@Suite(.serialized) struct PostgresTests {
  func json(_ line: some StringProtocol) -> [String: Any] {
    (try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any]) ?? [:]
  }

  /// 8 writer processes and 2 followers at once: every acknowledged write is
  /// in the log at the seq it printed, seqs are 1…head without a gap, and
  /// each follower prints every seq exactly once, in order.
  @Test func eightWritersAndTwoFollowers() throws {
    let s = Sandbox(.postgres)
    s.append("seed")
    let perWriter = ProcessInfo.processInfo.environment["MSGLOG_STRESS"] != nil ? 100 : 25
    let total = 1 + 8 * perWriter
    let followers = (0..<2).map { _ in
      s.start(["log", "--follow", "--all", "--json", "--from", "1", "--limit", String(total)])
    }
    let printed = Mutex<[(Int, String)]>([])
    DispatchQueue.concurrentPerform(iterations: 8) { w in
      for i in 0..<perWriter {
        let r = s.run(["append", "--json", "--stream", "w\(w % 3)", "writer \(w) message \(i)"])
        guard r.code == 0 else {
          Issue.record("writer \(w): \(r)")
          continue
        }
        let object = json(r.stdout)
        printed.withLock { $0.append((object["seq"] as? Int ?? -1, object["id"] as? String ?? "")) }
      }
    }
    let log = s.run(["log", "--all", "--json"]).lines.map { json($0) }
    #expect(log.map { $0["seq"] as? Int ?? -1 } == Array(1...total), "seqs are not 1…\(total)")
    for (seq, id) in printed.withLock({ $0 }) {
      #expect(log[seq - 1]["id"] as? String == id, "acknowledged seq \(seq) holds another event")
    }
    for (n, follower) in followers.enumerated() {
      // Short of its events, it would wait for them for ever.
      let r = follower.finish(endingAfter: 60)
      #expect(r.code == 0, "follower \(n): \(r.stderr)")
      #expect(r.lines.map { json($0)["seq"] as? Int ?? -1 } == Array(1...total), "follower \(n) skipped or repeated")
    }
    #expect(s.run("verify").code == 0)
  }

  /// A client killed with SIGKILL in the middle of a write: the server
  /// rolls its transaction back; nothing is half-applied.
  @Test func aKilledClientHalfAppliesNothing() throws {
    let s = Sandbox(.postgres)
    s.append("seed")
    func batch(_ i: Int) -> Data {
      Data((0..<2000).map { #"{"op":"append","stream":"batch","text":"b\#(i)-\#($0)"}"# }.joined(separator: "\n").utf8)
    }
    // How long one import takes here, so that kills land anywhere from
    // before the connection to after the commit, on a fast or slow machine.
    // The first import into the empty stream takes the bulk COPY path; the
    // killed ones go through the ledger (the stream has events), so the
    // second, timed import is one of their kind.
    #expect(s.run(["import"], stdin: batch(100)).code == 0)
    let started = ContinuousClock.now
    #expect(s.run(["import"], stdin: batch(101)).code == 0)
    let took = ContinuousClock.now - started
    let span = UInt32(took.components.seconds) * 1_000_000 + UInt32(took.components.attoseconds / 1_000_000_000_000)
    var head = 4001
    var killed = 0
    for i in 0..<30 {
      let child = s.start(["import"], stdin: batch(i))
      // Deliberate: the kill lands at a random point of the import (the
      // scenario), and what is checked holds wherever it lands.
      usleep(UInt32.random(in: 0...(span * 3 / 2)))
      kill(child.process.processIdentifier, SIGKILL)
      let r = child.finish()
      if child.process.terminationReason == .uncaughtSignal { killed += 1 } else { #expect(r.code == 0, "\(r)") }
      let added = s.run(["log", "--all", "--json", "--from", String(head + 1)]).lines.count
      // Whole imports only (a client killed after sending COMMIT may still
      // commit, a moment after it died: then two land at once).
      #expect(added % 2000 == 0, "iteration \(i): \(added) events, not whole imports of 2000")
      head += added
      #expect(s.run("verify").code == 0, "iteration \(i)")
    }
    #expect(killed > 0 && killed < 30, "\(killed) of 30 killed: the kills should land before and after commits")
    // Every import that landed, landed whole.
    var lines: [Substring: Int] = [:]
    for line in s.run(["--stream", "batch", "list"]).lines {
      let text = line.split(separator: "  ").last!
      lines[text.prefix { $0 != "-" }, default: 0] += 1
    }
    #expect(lines.values.allSatisfy { $0 == 2000 }, "\(lines)")
    print("postgres: 30 imports of 2000 lines, \(killed) killed mid-command, none half-applied")
  }

  /// The server stops at once (`pg_ctl stop -m immediate`) in the middle of
  /// a run and comes back: clients in flight fail with one clear line and
  /// exit 1, nothing acknowledged is lost, and writes resume. On a server
  /// of the test's own: the shared cluster's other users must not see it go.
  @Test func theServerCrashesAndComesBack() throws {
    let server = PostgresServer.primary()
    defer { server.stop() }
    #expect(server.psql("CREATE DATABASE crash").code == 0)
    let db = server.url(of: "crash")
    let password = String(db.split(separator: ":")[2].split(separator: "@")[0])
    let s = Sandbox()
    s.run(["--db", db, "append", "seed"])
    struct Progress {
      var running = true
      var acknowledged: [String] = []
      var failures: [Run] = []
    }
    let progress = Mutex(Progress())
    let group = DispatchGroup()
    for w in 0..<4 {
      DispatchQueue.global().async(group: group) {
        var i = 0
        while progress.withLock({ $0.running }) {
          let r = s.run(["--db", db, "append", "--json", "w\(w) m\(i)"])
          i += 1
          let id = json(r.stdout)["id"] as? String ?? ""
          progress.withLock {
            if r.code == 0 { $0.acknowledged.append(id) } else { $0.failures.append(r) }
          }
        }
      }
    }
    /// Waits (a watchdog bounds it) until `ready` holds of the progress.
    func waitFor(_ ready: (Progress) -> Bool) {
      let deadline = Date().addingTimeInterval(60)
      while !progress.withLock({ ready($0) }), Date() < deadline { usleep(10_000) }
    }
    // Crashed once writes are being acknowledged, restarted once a client
    // has failed on the crash, and stopped once writes land again.
    waitFor { $0.acknowledged.count >= 8 }
    #expect(server.control("crash") == 0)
    waitFor { !$0.failures.isEmpty }
    let beforeRestart = progress.withLock { $0.acknowledged.count }
    #expect(server.control("restart") == 0)
    waitFor { $0.acknowledged.count >= beforeRestart + 8 }
    progress.withLock { $0.running = false }
    group.wait()
    let (acknowledged, failures) = progress.withLock { ($0.acknowledged, $0.failures) }
    #expect(!failures.isEmpty, "no client was in flight when the server stopped")
    for r in failures {
      #expect(r.code == 1, "\(r)")
      #expect(r.stderr.hasPrefix("msglog: "), "\(r)")
      #expect(r.stderr.split(separator: "\n").count <= 2, "\(r)")
      #expect(!r.stderr.contains(password), "a password reached the output")
    }
    let logged = Set(s.run(["--db", db, "log", "--json"]).lines.map { json($0)["id"] as? String ?? "" })
    #expect(
      Set(acknowledged).isSubset(of: logged), "\(Set(acknowledged).subtracting(logged).count) acknowledged writes lost")
    #expect(s.run(["--db", db, "append", "after the restart"]).code == 0)
    #expect(s.run(["--db", db, "verify"]).code == 0)
    print("postgres crash: \(acknowledged.count) acknowledged, all present; \(failures.count) clients failed cleanly")
  }

  @Test func connectionFailuresAreOneClearLine() {
    let s = Sandbox(.postgres)
    s.append("seed")
    let server = PostgresCluster.server
    let wrongPassword = server.replacing(PostgresCluster.password, with: "not-the-password")
    let cases: [(String, String)] = [
      ("postgres://msglog:secret@127.0.0.1:1/x", "msglog: cannot connect to postgres://msglog@127.0.0.1:1/x: "),
      (wrongPassword + "/postgres", "password authentication failed"),
      (server + "/no_such_database", "database \"no_such_database\" does not exist"),
    ]
    // A server that accepts the connection and never answers: libpq's
    // connect_timeout still holds (msglog drives the connection itself).
    let silent = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    defer { close(silent) }
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_addr.s_addr = inet_addr("127.0.0.1")
    var length = socklen_t(MemoryLayout<sockaddr_in>.size)
    withUnsafeMutablePointer(to: &address) {
      $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { pointer in
        _ = bind(silent, pointer, length)
        _ = listen(silent, 16)
        _ = getsockname(silent, pointer, &length)
      }
    }
    let port = UInt16(bigEndian: address.sin_port)
    let timeoutCase = (
      "postgres://msglog@127.0.0.1:\(port)/x?connect_timeout=2", "timeout expired: no answer within 2 s"
    )
    for (url, message) in cases + [timeoutCase] {
      for args in [["list"], ["append", "x"], ["log", "--follow"]] {
        let r = s.run(["--db", url] + args)
        #expect(r.code == 1 && r.stdout.isEmpty, "\(args): \(r)")
        #expect(r.stderr.contains(message), "\(args): \(r)")
        #expect(r.stderr.split(separator: "\n").count == 1, "\(args): more than one line: \(r)")
        #expect(!r.stderr.contains("secret") && !r.stderr.contains(PostgresCluster.password), "\(r)")
      }
    }
    // Without connect_timeout, libpq would wait for ever: msglog gives up
    // after its default of 10 s (the message names the limit it used), or
    // after what libpq's environment says.
    for (environment, seconds) in [([:], 10), (["PGCONNECT_TIMEOUT": "3"], 3)] {
      let child = s.start(["--db", "postgres://msglog@127.0.0.1:\(port)/x", "list"], environment: environment)
      // A watchdog only, far beyond the limit: the test measures nothing but that it ended.
      for _ in 0..<2400 where child.process.isRunning { usleep(50_000) }
      if child.process.isRunning {
        Issue.record("msglog still waits for a silent server")
        kill(child.process.processIdentifier, SIGKILL)
      }
      let r = child.finish()
      #expect(
        r.code == 1 && r.stdout.isEmpty
          && r.stderr
            == "msglog: cannot connect to postgres://msglog@127.0.0.1:\(port)/x: timeout expired: no answer within \(seconds) s (connect_timeout=\(seconds))\n",
        "\(environment): \(r)")
    }
  }

  /// libpq's environment fills in what the URL leaves out — host, port,
  /// user, password, database, a service file — and a password given in the
  /// query string is redacted like one in the user part.
  @Test func libpqsEnvironmentFillsInTheURL() throws {
    let s = Sandbox(.postgres)
    let name = try #require(s.db.split(separator: "/").last).description
    let hostPort = try #require(PostgresCluster.server.split(separator: "@").last)
    let host = String(hostPort.split(separator: ":")[0]), port = String(hostPort.split(separator: ":")[1])
    let everything = [
      "PGHOST": host, "PGPORT": port, "PGUSER": "msglog", "PGPASSWORD": PostgresCluster.password, "PGDATABASE": name,
    ]
    #expect(s.run(["--db", "postgres://", "append", "from the environment"], environment: everything).code == 0)
    var some = everything
    some["PGDATABASE"] = nil
    let r = s.run(
      ["append", "database in the URL"], environment: some.merging(["MSGLOG_DB": "postgresql:///\(name)"]) { $1 })
    #expect(r.code == 0, "\(r)")

    let services = s.dir + "/pg_service.conf"
    try """
    [team]
    host=\(host)
    port=\(port)
    user=msglog
    password=\(PostgresCluster.password)
    dbname=\(name)

    """.write(toFile: services, atomically: true, encoding: .utf8)
    let service = ["PGSERVICEFILE": services, "PGSERVICE": "team"]
    #expect(s.run(["--db", "postgres://", "append", "from a service"], environment: service).code == 0)
    let listed = s.run(["list"])
    #expect(
      listed.lines.map { String($0.split(separator: "  ").last!) } == [
        "from the environment", "database in the URL", "from a service",
      ], "\(listed)")

    let wrong = "postgres://msglog@\(hostPort)/\(name)?password=hunter2-secret&sslmode=disable"
    let refused = s.run(["--db", wrong, "append", "x"])
    #expect(refused.code == 1 && refused.stderr.contains("password authentication failed"), "\(refused)")
    #expect(!refused.stderr.contains("hunter2") && refused.stderr.split(separator: "\n").count == 1, "\(refused)")
  }

  @Test func aDatabaseThatIsNotMsglogsIsNeverWritten() {
    let other = PostgresCluster.createDatabase()
    defer { PostgresCluster.dropDatabase(other.name) }
    #expect(
      PostgresCluster.psql("CREATE SCHEMA msglog; CREATE TABLE msglog.stuff (x int)", database: other.name).code == 0)
    let before = PostgresCluster.psql(
      "SELECT count(*) FROM information_schema.tables WHERE table_schema = 'msglog'", database: other.name
    ).stdout
    let s = Sandbox()
    for args in [["append", "x"], ["list"], ["import"]] {
      let r = s.run(["--db", other.url] + args, stdin: Data(#"{"op":"append","text":"x"}"#.utf8))
      #expect(r.code == 1 && r.stderr.contains("is not a msglog database (it has a schema named msglog"), "\(r)")
    }
    let after = PostgresCluster.psql(
      "SELECT count(*) FROM information_schema.tables WHERE table_schema = 'msglog'", database: other.name
    ).stdout
    #expect(before == after)
  }

  @Test func aNewerSchemaIsRefused() {
    let s = Sandbox(.postgres)
    s.append("x")
    let name = String(s.db.split(separator: "/").last!)
    #expect(
      PostgresCluster.psql("UPDATE msglog.meta SET value = '99'::bytea WHERE key = 'schema'", database: name).code == 0)
    let r = Sandbox(.postgres).run(["--db", s.db, "list"])
    #expect(
      r.code == 1 && r.stderr.contains("was written by a newer msglog (format schema 99; this one knows schema 9)"),
      "\(r)")
  }

  /// The database's own constraints: even with derived rows damaged
  /// behind msglog's back, no second `v1` and no reused id reach the log.
  @Test func theDatabaseRefusesAForkedLog() {
    let s = Sandbox(.postgres)
    s.append("one")
    let name = String(s.db.split(separator: "/").last!)
    #expect(PostgresCluster.psql("DELETE FROM msglog.streams", database: name).code == 0)
    let r = s.run(["append", "two"])
    #expect(r.code == 1 && r.stderr.hasPrefix("msglog: the derived tables disagree with the log"), "\(r)")
    #expect(s.run(["log", "--json"]).lines.count == 1)
    #expect(s.run(["verify", "--repair"]).code == 0)
    #expect(s.run(["append", "two"]).code == 0)
  }

  /// `export | import` into PostgreSQL and back gives byte-identical exports,
  /// on the seed fixtures and on a generated log of 100,000 events.
  @Test(arguments: ["chat.jsonl", "colour-board.jsonl", "form-cards.jsonl", "generated"])
  func movingALogThereAndBackChangesNothing(_ source: String) throws {
    let lmdb = Sandbox()
    let input: Data
    if source == "generated" {
      input = Data(Self.generatedLog(events: 100_000).utf8)
    } else {
      input = try Data(contentsOf: URL(fileURLWithPath: fixture(source)))
    }
    #expect(lmdb.run(["import"], stdin: input).code == 0)
    let exported = lmdb.export()
    let postgres = Sandbox(.postgres)
    var r = postgres.run(["import"], stdin: Data(exported.utf8))
    #expect(r.code == 0, "\(r)")
    let fromPostgres = postgres.export()
    #expect(fromPostgres == exported)
    let back = Sandbox()
    r = back.run(["import"], stdin: Data(fromPostgres.utf8))
    #expect(r.code == 0, "\(r)")
    #expect(back.export() == exported)
    #expect(postgres.run("verify").code == 0)
    for stream in ["main", "other"] {
      #expect(
        postgres.run(["list", "--json", "--stream", stream]).stdout
          == lmdb.run(["list", "--json", "--stream", stream]).stdout)
    }
  }

  /// Appends, inserts, moves and removes over two streams, as import lines.
  static func generatedLog(events: Int) -> String {
    var rng = SeededGenerator(seed: 9)
    var counts = ["main": 0, "other": 0]
    var lines: [String] = []
    lines.reserveCapacity(events)
    for n in 0..<events {
      let stream = n % 5 == 0 ? "other" : "main"
      let count = counts[stream]!
      let roll = Int.random(in: 0..<10, using: &rng)
      if count < 2 || roll < 6 {
        let index = Int.random(in: 0...count, using: &rng)
        lines.append(
          #"{"op":"insert","stream":"\#(stream)","index":\#(index),"text":"message \#(n)","time":"2026-11-30T10:00:00.000Z"}"#
        )
        counts[stream] = count + 1
      } else {
        let from = Int.random(in: 0..<count, using: &rng)
        let to = (from + 1 + Int.random(in: 0..<(count - 1), using: &rng)) % count
        lines.append(
          #"{"op":"move","stream":"\#(stream)","from":\#(from),"to":\#(to),"time":"2026-11-30T10:00:00.000Z"}"#)
      }
    }
    return lines.joined(separator: "\n")
  }
}
