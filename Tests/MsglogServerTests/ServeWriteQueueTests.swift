import Foundation
import MsglogLoopback
import MsglogTestSupport
import Testing

/// A write sent to `msglog serve` is queued in the group commit and
/// answered by the thread that commits its batch, and most are queued
/// straight from the event loop: nothing of that may keep the event loop,
/// or the workers, waiting for the store.
@Suite struct ServeWriteQueueTests {
  /// Another process holds LMDB's write lock while 40 clients' appends
  /// wait for it — more than the server has workers: the server still
  /// answers `/livez` and a read, and once the lock is let go every append
  /// is answered, each with its own seq. (When each write held a worker
  /// until its commit, the reads waited behind them for the lock.)
  @Test func writesWaitingForTheStoreKeepNothingElseWaiting() throws {
    let s = Sandbox()
    s.append("seed")
    let server = try ServedLog.running(s)
    defer { #expect(server.stop().code == 0) }
    // A first write, so that the log is known to be no replica: the next
    // ones may be queued from the event loop.
    #expect(server.request("POST", "/api/append", #"{"text":"first"}"#).status == 200)
    let lock = try WriterLock(s)
    let writers = 40
    var sockets: [LoopbackSocket] = []
    for n in 0..<writers {
      let socket = try #require(LoopbackSocket(port: server.port))
      let body = #"{"text":"waiting \#(n)"}"#
      #expect(
        socket.send(
          "POST /api/append HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
            + "Content-Length: \(body.utf8.count)\r\n\r\n\(body)"))
      sockets.append(socket)
    }
    // Time for the server to take the writes in (not a check: the reads
    // below must be answered whether or not it has).
    usleep(300_000)
    for path in ["/livez", "/api/items"] {
      let reader = try #require(LoopbackSocket(port: server.port))
      #expect(reader.send("GET \(path) HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n"))
      let reply = reader.receive(seconds: 10).text
      #expect(reply.hasPrefix("HTTP/1.1 200"), "\(path) while the writes wait: \(reply.prefix(80))")
    }
    lock.release()
    var seqs: Set<Int> = []
    for socket in sockets {
      let reply = socket.receive(seconds: 30) { $0.contains("\r\n\r\n{") && $0.hasSuffix("}") }.text
      #expect(reply.hasPrefix("HTTP/1.1 200"), "\(reply.prefix(200))")
      if let seq = reply.firstRange(of: #/"seq":(\d+)/#).map({ Int(reply[$0].dropFirst(6))! }) { seqs.insert(seq) }
    }
    #expect(seqs == Set(3...(writers + 2)), "seqs \(seqs.sorted())")
    #expect(s.run("verify").code == 0)
  }

  /// Another process holds LMDB's write lock while 100 clients, one after
  /// another, each send a whole append of 1 MB: the bodies waiting for the
  /// commit stay in the server's body budget until they are answered, so
  /// past the budget (48 of the largest bodies) the rest are answered 503
  /// and memory stays bounded; once the lock is let go every write let in
  /// is answered 200.
  /// (When the budget was given back as a body was read, 1,000 such
  /// writes waiting grew the server by 1.7 GB.)
  @Test func writesWaitingForTheStoreHoldTheirBodiesInTheBudget() throws {
    let s = Sandbox()
    s.append("seed")
    let server = try ServedLog.running(s)
    defer { #expect(server.stop().code == 0) }
    #expect(server.request("POST", "/api/append", #"{"text":"first"}"#).status == 200)
    let before = try ServeSafetyTests.memory(of: server.pid).rss
    let lock = try WriterLock(s)
    let body = Array(#"{"text":""#.utf8) + [UInt8](repeating: UInt8(ascii: "w"), count: 1_000_000) + Array(#""}"#.utf8)
    let request =
      Array(
        "POST /api/append HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: \(body.count)\r\n\r\n"
          .utf8) + body
    // One after another, each read whole by the server before the next:
    // no two bodies are being read at once, so only the bodies waiting
    // for the commit can fill the budget.
    var sockets: [LoopbackSocket] = []
    for _ in 0..<100 {
      guard let socket = LoopbackSocket(port: server.port) else { continue }
      socket.send(request)
      sockets.append(socket)
      #expect(SocketQueues.waitUntilServerReadAll(port: server.port), "the server left bytes unread")
    }
    #expect(sockets.count == 100)
    let waiting = try ServeSafetyTests.memory(of: server.pid)
    let growth = max(waiting.rss, waiting.peak) - before
    #expect(growth < 256 << 20, "RSS grew by \(growth >> 20) MiB while the writes waited")
    lock.release()
    var answered = 0
    var refused = 0
    for (n, socket) in sockets.enumerated() {
      let reply = socket.receive(seconds: 30, until: LoopbackSocket.isWholeAnswer).text
      switch ServeHostileTrafficTests.status(reply) {
      case 200: answered += 1
      case 503:
        ServeHostileTrafficTests.expectOwnError(reply, 503, "a write past the budget")
        refused += 1
      default:
        let what = LoopbackSocket.isWholeAnswer(reply) ? "answered neither 200 nor 503" : "no whole answer in 30 s"
        Issue.record("write \(n + 1) of \(sockets.count), \(what): '\(reply.prefix(200))'")
      }
    }
    #expect(refused > 0 && answered >= 40, "\(answered) answered, \(refused) refused")
    #expect(answered + refused == sockets.count)
    // Each write let in is in the log once: the seed, "first", and those,
    // each an event of the stream and a live item. (Counted, not printed:
    // `log --json` of the 54 MB and splitting it took most of this test's
    // time in a debug build.)
    let written = 2 + answered
    let streams = s.run("--json", "streams").stdout
    #expect(streams.contains(#""count":\#(written),"version":\#(written),"seq":\#(written)"#), "\(streams)")
    #expect(s.run("verify").code == 0)
  }
}
