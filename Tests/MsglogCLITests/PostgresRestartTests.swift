import Foundation
import Msglog
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
      usleep(600_000)  // longer than the timeout: every pooled connection is closed
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
}
