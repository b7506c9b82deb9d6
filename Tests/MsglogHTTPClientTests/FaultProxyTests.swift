import Foundation
import MsglogHTTPClient
import MsglogLoopback
import MsglogTestSupport
import Testing

#if canImport(Glibc)
  import Glibc
#endif

/// The fault-injecting proxy in front of the real `msglog serve`: each kind
/// of fault, what the client sees, and whether the server did the request.
@Suite(.serialized) struct FaultProxyTests {
  private func failure(_ body: () throws -> Void) -> HTTPClientError? {
    do {
      try body()
      return nil
    } catch let error as HTTPClientError {
      return error
    } catch {
      Issue.record("not an HTTPClientError: \(error)")
      return nil
    }
  }

  private func append(_ client: HTTPClient, _ text: String) throws -> HTTPResponse {
    try client.send(.post("/api/append", json: Array(#"{"stream":"main","text":"\#(text)"}"#.utf8)), limit: 1 << 20)
  }

  private func texts(_ s: Sandbox) -> [String] {
    s.run(["log", "--json"]).lines.compactMap { line in
      line.components(separatedBy: #""text":""#).dropFirst().first?.components(separatedBy: "\"").first
    }
  }

  /// An append through each fault: the request is done unless it was
  /// dropped before it reached the server, and the client hears of it
  /// only when the answer came whole.
  @Test func eachFaultOnAnAppend() throws {
    let s = Sandbox()
    s.append("zero")
    let server = try ServedLog.running(s)
    defer { _ = server.stop() }
    let proxy = FaultProxy(target: server.port)
    defer { proxy.stop() }
    let client = HTTPClient(try HTTPURL(proxy.url))
    let origin = "127.0.0.1:\(proxy.port)"

    proxy.next([.pass])
    #expect(try append(client, "passed").status == 200)
    #expect(texts(s).last == "passed")

    proxy.next([.dropRequest])
    var error = failure { _ = try append(client, "dropped request") }
    #expect(error == .connectionLost(origin: origin, reason: "closed the connection without answering"))
    #expect(!texts(s).contains("dropped request"))

    proxy.next([.dropAnswer])
    error = failure { _ = try append(client, "dropped answer") }
    #expect(error == .connectionLost(origin: origin, reason: "closed the connection without answering"))
    #expect(texts(s).last == "dropped answer")

    proxy.next([.cutAnswer])
    error = failure { _ = try append(client, "cut answer") }
    guard case .connectionLost(_, let reason) = error else {
      Issue.record("\(String(describing: error))")
      return
    }
    #expect(reason.hasPrefix("closed the connection before the end of the answer"), "\(reason)")
    #expect(texts(s).last == "cut answer")

    proxy.next([.delay])
    #expect(try append(client, "delayed").status == 200)
    #expect(texts(s) == ["zero", "passed", "dropped answer", "cut answer", "delayed"])
    #expect(proxy.counts == [.pass: 1, .dropRequest: 1, .dropAnswer: 1, .cutAnswer: 1, .delay: 1])
    #expect(proxy.history.map(\.fault) == [.pass, .dropRequest, .dropAnswer, .cutAnswer, .delay])
    #expect(proxy.history.allSatisfy { $0.request == "POST /api/append HTTP/1.1" })
  }

  /// A long answer cut halfway: the client has read a true prefix of it,
  /// then learns the connection was lost, never a short answer taken whole.
  @Test func aStreamedAnswerCutHalfway() throws {
    let s = Sandbox()
    let lines = (1...2000).map { "message \($0)" }.joined(separator: "\n")
    #expect(s.run(["append", "--lines"], stdin: Data(lines.utf8)).code == 0)
    let server = try ServedLog.running(s)
    defer { _ = server.stop() }
    let proxy = FaultProxy(target: server.port)
    defer { proxy.stop() }
    let whole = s.run(["log", "--json"]).stdout
    let client = HTTPClient(try HTTPURL(proxy.url))
    #expect(try client.send(.get("/api/events?from=1&limit=100000"), limit: 1 << 24).text == whole)

    proxy.next([.cutAnswer])
    let stream = try HTTPClient(try HTTPURL(proxy.url)).open(.get("/api/events?from=1&limit=100000"))
    var received: [UInt8] = []
    let error = failure { while let piece = try stream.next() { received += piece } }
    guard case .connectionLost = error else {
      Issue.record("\(String(describing: error))")
      return
    }
    #expect(!received.isEmpty && received.count < whole.utf8.count)
    #expect(whole.utf8.starts(with: received))
    #expect(proxy.counts[.cutAnswer] == 1)
  }

  /// An event stream passes through as it comes; a dropped answer of a
  /// follow leaves the client with a lost connection.
  @Test func eventStreamsPassThroughAsTheyCome() throws {
    let s = Sandbox()
    s.append("first")
    let server = try ServedLog.running(s)
    defer { _ = server.stop() }
    let proxy = FaultProxy(target: server.port)
    defer { proxy.stop() }
    let client = HTTPClient(try HTTPURL(proxy.url), .init(idleTimeout: 60))
    let stream = try client.open(.get("/api/follow?stream=main&from=2"))
    let events = ServerSentEventReader(stream)
    s.append("second")
    let event = try #require(try events.next())
    #expect(event.id == "2" && event.data.contains(#""text":"second""#), "\(event)")
    stream.close()

    proxy.next([.dropAnswer])
    let error = failure { _ = try HTTPClient(try HTTPURL(proxy.url)).open(.get("/api/follow?stream=main")) }
    #expect(
      error == .connectionLost(origin: "127.0.0.1:\(proxy.port)", reason: "closed the connection without answering"))
    #expect(proxy.counts[.dropAnswer] == 1)
  }

  /// Request bodies framed by chunks, and `Expect: 100-continue`, reach the
  /// server whole (curl sends them).
  @Test func chunkedRequestBodiesAreForwarded() throws {
    let s = Sandbox()
    let server = try ServedLog.running(s)
    defer { _ = server.stop() }
    let proxy = FaultProxy(target: server.port)
    defer { proxy.stop() }
    let body = s.dir + "/body.json"
    try #"{"stream":"main","text":"chunked"}"#.write(toFile: body, atomically: true, encoding: .utf8)
    let out = s.dir + "/out"
    let status = shell(
      "curl -s -o '\(out)' -w '%{http_code}' -H 'Content-Type: application/json' -H 'Transfer-Encoding: chunked'"
        + " -H 'Expect: 100-continue' --data-binary @'\(body)' '\(proxy.url)/api/append' > '\(out).code'")
    #expect(status == 0)
    #expect((try? String(contentsOfFile: out + ".code", encoding: .utf8)) == "200")
    #expect(texts(s) == ["chunked"])
  }

  /// The same seed draws the same faults in the same order; every kind in
  /// the mix is drawn, and counted when it happened.
  @Test func aSeedChoosesTheFaults() throws {
    let s = Sandbox()
    s.append("first")
    let server = try ServedLog.running(s)
    defer { _ = server.stop() }
    let mix: [FaultProxy.Fault: Int] = [.pass: 3, .dropRequest: 1, .dropAnswer: 1, .cutAnswer: 1, .delay: 1]
    var runs: [[FaultProxy.Fault]] = []
    for _ in 0..<2 {
      let proxy = FaultProxy(target: server.port, seed: 27, mix: mix, delay: 0.01)
      defer { proxy.stop() }
      var answered = 0
      for _ in 0..<30 {
        // A client per request: a GET on a kept connection that was dropped would be sent again.
        if (try? HTTPClient(try HTTPURL(proxy.url)).send(.get("/api/streams"), limit: 1 << 20))?.status == 200 {
          answered += 1
        }
      }
      let counts = proxy.counts
      #expect(counts.values.reduce(0, +) == 30)
      #expect(Set(counts.keys) == Set(FaultProxy.Fault.allCases), "\(counts)")
      #expect(answered == counts[.pass, default: 0] + counts[.delay, default: 0])
      runs.append(proxy.history.map(\.fault))
    }
    #expect(runs[0] == runs[1])
  }

  @Test func stopEndsEveryConnection() throws {
    let s = Sandbox()
    let marker = "first " + UUID().uuidString
    s.append(marker)
    let server = try ServedLog.running(s)
    defer { _ = server.stop() }
    let proxy = FaultProxy(target: server.port)
    let client = HTTPClient(try HTTPURL(proxy.url), .init(idleTimeout: 600))
    let stream = try client.open(.get("/api/follow?stream=main"))
    proxy.stop()
    // The open follow ends (the proxy closed it), and nothing listens any more.
    let error = failure { while try stream.next() != nil {} }
    #expect(error != nil)
    // Nothing listens there any more — or, when another test's listener
    // took the freed port meanwhile, it is not this proxy to this log.
    if let socket = LoopbackSocket(port: proxy.port) {
      _ = socket.send("GET /api/items HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n")
      let answer = socket.receive(seconds: 5) { $0.contains(marker) }
      #expect(!answer.text.contains(marker), "the proxy still answers after stop")
    }
  }
}
