import Foundation
import MsglogLoopback
import MsglogTestSupport
import Testing

#if canImport(Glibc)
  import Glibc
#endif

/// A big answer to a client that reads slower than the server writes (a
/// phone on a slow network loading a big board, issue 34 item 10): every
/// streamed route completes, for several such readers at once, with the
/// server's memory bounded. On the engine that asked for the next piece
/// only when the last came back, an answer stopped for good once the
/// socket's buffers filled (5 MiB of 30, then nothing).
@Suite(.serialized) struct ServeSlowReaderTests {
  /// How a slow reader reads: a small receive buffer, 64 KiB at a time,
  /// with a pause between reads (about 3 MB/s, slower than the server).
  static let readSize = 64 * 1024
  static let pause: useconds_t = 20_000

  /// What a reader got: every byte until the server closed the connection
  /// or `enough` said so; `stalled` when nothing came for `stall` seconds.
  struct Reading: Sendable {
    var bytes: [UInt8] = []
    var stalled = false
  }

  static func read(
    port: UInt16, _ target: String, slowly: Bool, stall: Double = 20, enough: ([UInt8]) -> Bool = { _ in false }
  ) -> Reading {
    var reading = Reading()
    guard let socket = LoopbackSocket(port: port, receiveBuffer: slowly ? readSize : nil) else { return reading }
    socket.send("GET \(target) HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n")
    while let chunk = socket.read(atMost: slowly ? readSize : 1 << 20, seconds: stall) {
      if chunk.isEmpty {
        reading.stalled = true
        break
      }
      reading.bytes += chunk
      if enough(reading.bytes) { break }
      if slowly { usleep(pause) }  // deliberate: the slow reader's trickle is the scenario
    }
    return reading
  }

  /// The body of a chunked answer as far as its chunks came whole, and
  /// whether its last chunk came; nil when it is not chunked.
  static func body(of answer: [UInt8]) -> (body: [UInt8], ended: Bool)? {
    guard let end = find([13, 10, 13, 10], in: answer[...]) else { return nil }
    let head = String(decoding: answer[..<end], as: UTF8.self).lowercased()
    guard head.contains("transfer-encoding: chunked") else { return nil }
    var at = end + 4
    var body: [UInt8] = []
    while let lineEnd = find([13, 10], in: answer[at...]),
      let size = Int(String(decoding: answer[at..<lineEnd], as: UTF8.self), radix: 16)
    {
      at = lineEnd + 2
      if size == 0 { return (body, true) }
      guard answer.count >= at + size + 2 else { break }
      body += answer[at..<(at + size)]
      at += size + 2
    }
    return (body, false)
  }

  /// Where `pattern` starts in `bytes` (memchr and memcmp: these answers
  /// are megabytes, and the tests are built without optimisation).
  static func find(_ pattern: [UInt8], in bytes: ArraySlice<UInt8>) -> Int? {
    bytes.withUnsafeBytes { haystack in
      pattern.withUnsafeBytes { needle -> Int? in
        guard let base = haystack.baseAddress, let first = needle.baseAddress else { return nil }
        var offset = 0
        while haystack.count - offset >= needle.count {
          guard let hit = memchr(base + offset, Int32(needle[0]), haystack.count - offset - needle.count + 1) else {
            return nil
          }
          let at = UnsafeRawPointer(hit) - base
          if memcmp(base + at, first, needle.count) == 0 { return bytes.startIndex + at }
          offset = at + 1
        }
        return nil
      }
    }
  }

  /// Two slow readers at once on each streamed route — items, items at a
  /// seq, events, diff, follow and a sync pull — each get the whole answer,
  /// byte for byte what a fast reader gets, and the server grows by little.
  @Test func everyStreamedAnswerCompletesForSlowReaders() throws {
    let s = Sandbox()
    let text = String(repeating: "m", count: 1_000)
    let lines = (0..<8_000).map { #"{"op":"append","stream":"heavy","text":"\#($0) \#(text)"}"# }
    #expect(s.run(["import"], stdin: Data(lines.joined(separator: "\n").utf8)).code == 0)
    let server = try ServedLog.running(s)
    defer { #expect(server.stop().code == 0) }
    let hello = server.request("GET", "/api/sync?protocol=1")
    let log = try #require(hello.body.firstMatch(of: /"log":"([0-9a-f-]{36})"/)?.1)
    let routes: [(target: String, follows: Bool)] = [
      ("/api/items?stream=heavy", false),
      ("/api/items?stream=heavy&at=7999", false),
      ("/api/events?stream=heavy&limit=100000", false),
      ("/api/diff?stream=heavy&from=0&to=8000", false),
      ("/api/follow?stream=heavy&from=1", true),
      ("/api/sync/pull?log=\(log)&after=0", false),
    ]
    /// An event stream has sent its last event whole: the chunk that holds
    /// it has ended (the stream then waits for the next commit).
    @Sendable func hasLastEvent(_ answer: [UInt8]) -> Bool {
      answer.suffix(4) == [10, 10, 13, 10] && Self.find(Array("id: 8000\n".utf8), in: answer.suffix(8192)) != nil
    }
    /// What a reader got of the answer: its whole body, or (an event
    /// stream, which never ends) its events up to the last one; nil when
    /// it was cut short.
    @Sendable func whole(_ reading: Reading, follows: Bool) -> [UInt8]? {
      guard !reading.stalled, let (body, ended) = Self.body(of: reading.bytes) else { return nil }
      guard follows else { return ended ? body : nil }
      // A reader slower than the stream may get a keep-alive comment after the last event.
      let events = String(decoding: body, as: UTF8.self).replacingOccurrences(of: ": keep-alive\n\n", with: "")
      return hasLastEvent(reading.bytes) ? Array(events.utf8) : nil
    }
    let port = server.port
    let expected = routes.map { route in
      whole(Self.read(port: port, route.target, slowly: false) { route.follows && hasLastEvent($0) }, follows: route.follows)
    }
    for (route, answer) in zip(routes, expected) {
      #expect((answer?.count ?? 0) > 1_000_000, "a fast reader of \(route.target) got \(answer?.count ?? 0) bytes")
    }
    let before = try ServeSafetyTests.memory(of: server.pid)
    let received = Locked([Reading](repeating: Reading(), count: routes.count * 2))
    let done = DispatchSemaphore(value: 0)
    DispatchQueue.global().async {
      onThreads(routes.count * 2) { reader in
        let route = routes[reader % routes.count]
        let reading = Self.read(port: port, route.target, slowly: true) { route.follows && hasLastEvent($0) }
        received.update { $0[reader] = reading }
      }
      done.signal()
    }
    var peak = before.rss
    while done.wait(timeout: .now() + .milliseconds(50)) == .timedOut {
      if let now = try? ServeSafetyTests.memory(of: server.pid) { peak = max(peak, now.rss) }
    }
    let growth = peak - before.rss
    print("serve: two slow readers on each of six routes: peak RSS growth \(growth >> 20) MiB")
    #expect(growth < 48 << 20, "peak RSS grew by \(growth >> 20) MiB")
    for (reader, reading) in received.value.enumerated() {
      let route = routes[reader % routes.count]
      let answer = whole(reading, follows: route.follows)
      let fast = expected[reader % routes.count]
      #expect(
        answer != nil,
        "a slow reader of \(route.target) got \(reading.bytes.count) bytes, then \(reading.stalled ? "nothing" : "the end")"
      )
      let same = answer == fast  // not in the expectation, which would print megabytes
      #expect(
        same, "a slow reader of \(route.target) got \(answer?.count ?? 0) bytes, a fast one \(fast?.count ?? 0)")
    }
  }
}
