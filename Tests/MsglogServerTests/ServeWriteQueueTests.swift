import Foundation
import MsglogLoopback
import MsglogTestSupport
import Testing

/// A write sent to `msglog serve` is queued in the group commit and
/// answered by the thread that commits its batch, and most are queued
/// straight from the event loop: nothing of that may keep the event loop
/// waiting for the store.
@Suite struct ServeWriteQueueTests {
  /// Another process holds LMDB's write lock while 8 clients' appends
  /// wait for it: the server still answers `/livez` and a read at once,
  /// with the appends unanswered; once the lock is let go every append is
  /// answered, each with its own seq.
  @Test func writesWaitingForTheStoreKeepNothingElseWaiting() throws {
    let s = Sandbox()
    s.append("seed")
    let server = try ServedLog.running(s)
    defer { #expect(server.stop().code == 0) }
    // A first write, so that the log is known to be no replica: the next
    // ones are queued from the event loop.
    #expect(server.request("POST", "/api/append", #"{"text":"first"}"#).status == 200)
    let lock = Process()
    lock.executableURL = URL(fileURLWithPath: "/usr/bin/python3")
    lock.arguments = [
      "-c",
      "import lmdb,sys; env = lmdb.open(sys.argv[1], max_dbs=16); txn = env.begin(write=True); "
        + "print('held', flush=True); sys.stdin.read(); txn.abort()",
      s.db,
    ]
    let input = Pipe()
    let said = Pipe()
    lock.standardInput = input
    lock.standardOutput = said
    try lock.run()
    #expect(String(decoding: said.fileHandleForReading.availableData, as: UTF8.self).contains("held"))
    var writers: [LoopbackSocket] = []
    for n in 0..<8 {
      let socket = try #require(LoopbackSocket(port: server.port))
      let body = #"{"text":"waiting \#(n)"}"#
      #expect(
        socket.send(
          "POST /api/append HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
            + "Content-Length: \(body.utf8.count)\r\n\r\n\(body)"))
      writers.append(socket)
    }
    usleep(300_000)
    let started = Date()
    #expect(server.request("GET", "/livez").status == 200)
    #expect(server.request("GET", "/api/items").status == 200)
    #expect(Date().timeIntervalSince(started) < 5, "reads waited for the writes")
    for writer in writers {
      #expect(writer.receive(seconds: 0.05).text.isEmpty, "a write was answered while the lock was held")
    }
    try input.fileHandleForWriting.close()
    lock.waitUntilExit()
    var seqs: Set<Int> = []
    for writer in writers {
      let reply = writer.receive(seconds: 30) { $0.contains("\r\n\r\n{") && $0.hasSuffix("}") }.text
      #expect(reply.hasPrefix("HTTP/1.1 200"), "\(reply)")
      if let seq = reply.firstRange(of: #/"seq":(\d+)/#).map({ Int(reply[$0].dropFirst(6))! }) { seqs.insert(seq) }
    }
    #expect(seqs == Set(3...10), "seqs \(seqs.sorted())")
    #expect(s.run("verify").code == 0)
  }
}
