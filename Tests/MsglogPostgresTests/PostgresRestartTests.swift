import Foundation
import Msglog
import MsglogLoopback
import MsglogTestSupport
import Synchronization
import Testing

#if canImport(Glibc)
  import Glibc
#endif

/// A long-running process across a server restart (`pg_ctl restart -m
/// fast`) and `idle_session_timeout`, on a server of each test's own (the
/// shared cluster's other users must not see it go away).
@Suite(.serialized) struct PostgresRestartTests {
  /// A fresh database on a server of the test's own, with a log of one event.
  func database(on server: PostgresServer) throws -> String {
    let name = "msglog_restart_" + UUID().uuidString.replacing("-", with: "").lowercased()
    #expect(server.psql("CREATE DATABASE \(name)").code == 0)
    try EventLog(server.url(of: name)).append("seed")
    return server.url(of: name)
  }

  /// Requests at once (curl), which fill the pool with several
  /// connections: appends and reads, each one's status and body.
  func concurrentRequests(_ served: ServedLog, _ count: Int, in s: Sandbox) -> [String] {
    let url = served.url ?? "http://127.0.0.1:1"
    let dir = s.dir
    let replies = Mutex<[String]>([])
    DispatchQueue.concurrentPerform(iterations: count) { n in
      let out = dir + "/concurrent-\(UUID().uuidString)"
      let write = #"-X POST -H 'Content-Type: application/json' --data '{"text":"concurrent \#(n)"}' "#
      shell("curl -s -w ' %{http_code}' \(n % 2 == 0 ? write : "")'\(url)/api/\(n % 2 == 0 ? "append" : "items")' > '\(out)'")
      let reply = (try? String(contentsOfFile: out, encoding: .utf8)) ?? ""
      try? FileManager.default.removeItem(atPath: out)
      replies.withLock { $0.append(reply) }
    }
    return replies.withLock { $0 }
  }

  /// `serve` holds pooled connections when the server restarts: every
  /// request after it succeeds (a pooled connection the server closed is
  /// dropped before use, or its transaction runs again on a fresh one).
  @Test func aServerRestartCostsNoRequestAnError() throws {
    let server = PostgresServer.primary()
    defer { server.stop() }
    let url = try database(on: server)
    let s = Sandbox()
    let served = ServedLog(s, ["--db", url], useDefaultDB: false)
    defer { #expect(served.stop().code == 0) }
    for r in concurrentRequests(served, 8, in: s) { #expect(r.hasSuffix(" 200"), "before the restart: \(r)") }
    #expect(server.control("bounce") == 0)
    for r in concurrentRequests(served, 8, in: s) { #expect(r.hasSuffix(" 200"), "after the restart, at once: \(r)") }
    for n in 0..<20 {
      let r =
        n % 2 == 0
        ? served.request("POST", "/api/append", #"{"text":"after \#(n)"}"#) : served.request("GET", "/api/items")
      #expect(r.status == 200, "request \(n) after the restart: \(r)")
    }
    #expect(s.run(["--db", url, "verify"], useDefaultDB: false).code == 0)
  }

  /// The server closes sessions idle for 200 ms: a pooled connection
  /// closed that way costs no request an error.
  @Test func anIdleTimeoutCostsNoRequestAnError() throws {
    let server = PostgresServer.primary()
    defer { server.stop() }
    let url = try database(on: server)
    let name = String(url.split(separator: "/").last!)
    #expect(server.psql("ALTER DATABASE \(name) SET idle_session_timeout = '200ms'").code == 0)
    let s = Sandbox()
    let served = ServedLog(s, ["--db", url], useDefaultDB: false)
    defer { #expect(served.stop().code == 0) }
    for round in 0..<3 {
      for r in concurrentRequests(served, 6, in: s) { #expect(r.hasSuffix(" 200"), "round \(round): \(r)") }
      // Until the timeout has closed every pooled connection (the server says so).
      #expect(waitForSessions(of: name, on: server) { $0.isEmpty })
    }
    #expect(s.run(["--db", url, "verify"], useDefaultDB: false).code == 0)
  }

  /// An app holding an `EventLog`: the same restart, then writes and reads.
  @Test func anAppsEventLogSurvivesARestart() throws {
    let server = PostgresServer.primary()
    defer { server.stop() }
    let log = try EventLog(try database(on: server))
    try log.append("before")
    #expect(server.control("bounce") == 0)
    for n in 0..<5 {
      try log.append("after \(n)")
      #expect(try log.items().items.count == 3 + n)
    }
    #expect(try log.verify().problems.isEmpty)
  }

  /// Waits (a watchdog bounds it) until `ready` holds of the sessions open
  /// on database `name` (their backends' pids and start times), as the
  /// server's pg_stat_activity has them; whether it did.
  func waitForSessions(of name: String, on server: PostgresServer, _ ready: (Set<String>) -> Bool) -> Bool {
    let deadline = Date().addingTimeInterval(60)
    while Date() < deadline {
      let r = server.psql("SELECT pid || ' ' || backend_start FROM pg_stat_activity WHERE datname = '\(name)'")
      if r.code == 0, ready(Set(r.lines)) { return true }
    }
    return false
  }

  /// Waits (a watchdog, not a measure) until a child has printed `count` lines.
  func printed(_ child: Sandbox.Child, _ count: Int) -> Bool {
    for _ in 0..<1200 {
      let text = (try? String(contentsOfFile: child.outPath, encoding: .utf8)) ?? ""
      if text.split(separator: "\n").count >= count { return true }
      usleep(25_000)
    }
    return false
  }

  func seqs(_ r: Run) -> [Int] {
    r.lines.map { (try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any])?["seq"] as? Int ?? -1 }
  }

  /// `log --follow` across `pg_ctl restart -m fast`: it says it lost the
  /// server and is trying again, and prints every event — those before,
  /// those committed while it reconnected, those after — once, in order.
  @Test func aFollowerSurvivesARestart() throws {
    let server = PostgresServer.primary()
    defer { server.stop() }
    let url = try database(on: server)
    let s = Sandbox()
    let follower = s.start(["--db", url, "log", "--follow", "--json", "--from", "1", "--limit", "11"], useDefaultDB: false)
    for n in 0..<5 { #expect(s.run(["--db", url, "append", "before \(n)"], useDefaultDB: false).code == 0) }
    #expect(printed(follower, 6))
    #expect(server.control("bounce") == 0)
    for n in 0..<5 { #expect(s.run(["--db", url, "append", "after \(n)"], useDefaultDB: false).code == 0) }
    for _ in 0..<2400 where follower.process.isRunning { usleep(25_000) }
    if follower.process.isRunning { kill(follower.process.processIdentifier, SIGKILL) }
    let r = follower.finish()
    #expect(r.code == 0 && seqs(r) == Array(1...11), "\(r)")
    #expect(r.stderr.contains("msglog: lost the connection to ") && r.stderr.contains(" (trying again in "), "\(r)")
    #expect(r.stderr.hasSuffix(" again\n") && !r.stderr.contains("hint:"), "\(r)")
  }

  /// The server closes sessions idle for 300 ms, the follower's own among
  /// them, again and again while the log is quiet: it goes on, and prints
  /// what is committed after.
  @Test func aFollowerSurvivesAnIdleTimeout() throws {
    let server = PostgresServer.primary()
    defer { server.stop() }
    let url = try database(on: server)
    let name = String(url.split(separator: "/").last!)
    #expect(server.psql("ALTER DATABASE \(name) SET idle_session_timeout = '300ms'").code == 0)
    let s = Sandbox()
    let follower = s.start(["--db", url, "log", "--follow", "--json", "--from", "1", "--limit", "3"], useDefaultDB: false)
    #expect(printed(follower, 1))
    // Several timeouts: the follower's session closed and opened again
    // (a new backend each time) three times over, as the server says.
    var seen = Set<String>()
    #expect(
      waitForSessions(of: name, on: server) { now in
        seen.formUnion(now)
        return seen.count >= 4
      })
    for n in 0..<2 { #expect(s.run(["--db", url, "append", "after \(n)"], useDefaultDB: false).code == 0) }
    for _ in 0..<2400 where follower.process.isRunning { usleep(25_000) }
    if follower.process.isRunning { kill(follower.process.processIdentifier, SIGKILL) }
    let r = follower.finish()
    #expect(r.code == 0 && seqs(r) == [1, 2, 3], "\(r)")
  }

  /// `serve`'s event stream across a restart: it stays open, and an event
  /// committed after the restart arrives before any keep-alive (it is not
  /// left to the 15 s keep-alive); every id once, in order.
  @Test func serveStreamsSurviveARestart() throws {
    let server = PostgresServer.primary()
    defer { server.stop() }
    let url = try database(on: server)
    let s = Sandbox()
    let served = ServedLog(s, ["--db", url], useDefaultDB: false)
    defer { #expect(served.stop().code == 0) }
    try #require(served.url != nil, "the server printed no address")
    let port = served.port
    let connection = try #require(LoopbackSocket(port: port))
    connection.send("GET /api/follow?from=2 HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n")
    #expect(s.run(["--db", url, "append", "before"], useDefaultDB: false).code == 0)
    var received = connection.receive(seconds: 30) { $0.contains("id: 2\n") }.text
    #expect(server.control("bounce") == 0)
    #expect(s.run(["--db", url, "append", "after the restart"], useDefaultDB: false).code == 0)
    let more = connection.receive(seconds: 30) { $0.contains("id: 3\n") }
    received += more.text
    #expect(!more.closed, "the stream was cut: \(received)")
    let ids = received.split(separator: "\n").filter { $0.hasPrefix("id: ") }
    #expect(ids == ["id: 2", "id: 3"], "\(received)")
    #expect(received.contains("after the restart") && !received.contains("keep-alive"), "\(received)")
  }

  /// `serve`'s follower loses its connection (its backend terminated) and
  /// an event is committed at once, before it is back: the event streams
  /// still get it as soon as the follower reconnects, before any
  /// keep-alive (it goes on from its last seq, not from the head it finds).
  @Test func anEventCommittedWhileServeReconnectsArrivesAtOnce() throws {
    let server = PostgresServer.primary()
    defer { server.stop() }
    let url = try database(on: server)
    let name = String(url.split(separator: "/").last!)
    let s = Sandbox()
    let served = ServedLog(s, ["--db", url], useDefaultDB: false)
    defer { #expect(served.stop().code == 0) }
    try #require(served.url != nil, "the server printed no address")
    let port = served.port
    let connection = try #require(LoopbackSocket(port: port))
    connection.send("GET /api/follow?from=2 HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n")
    let log = try EventLog(url)
    try log.append("before")
    var received = connection.receive(seconds: 30) { $0.contains("id: 2\n") }.text
    let cut = server.psql(
      "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = '\(name)' AND query = 'LISTEN msglog'")
    try log.append("while it reconnects")
    #expect(cut.stdout.contains("t"), "\(cut)")
    received += connection.receive(seconds: 30) { $0.contains("id: 3\n") }.text
    let ids = received.split(separator: "\n").filter { $0.hasPrefix("id: ") }
    #expect(ids == ["id: 2", "id: 3"], "\(received)")
    #expect(received.contains("while it reconnects") && !received.contains("keep-alive"), "\(received)")
  }
}
