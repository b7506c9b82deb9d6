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
}
