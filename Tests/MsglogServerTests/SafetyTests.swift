import Foundation
import Msglog
import MsglogTestSupport
import Testing

@testable import MsglogServer

/// The checks that keep foreign pages out, in process: the same `Router`
/// and `RequestPolicy` the server runs, given plain `Request` values.
@Suite struct PolicyTests {
  let directory = TemporaryDirectory()
  let log: EventLog

  init() throws {
    log = try EventLog(directory.db)
    try log.append("x")
  }

  func router(_ options: (inout ServerConfiguration) -> Void = { _ in }) throws -> Router {
    var configuration = try ServerConfiguration(listen: ListenAddress(parsing: "127.0.0.1:8080"))
    options(&configuration)
    return try HTTPServer(log: log, configuration: configuration).router
  }

  func status(_ router: Router, _ method: String, _ target: String, _ headers: [(String, String)]) throws -> UInt32 {
    router.respond(
      to: try Request(method: method, target: target, headers: headers, body: Array(#"{"text":"y"}"#.utf8))
    )
    .status
  }

  @Test func hostsServed() throws {
    let router = try router { $0.allowedHosts = ["msglog.lan"] }
    for host in ["localhost", "localhost:8080", "127.0.0.1:8080", "127.9.9.9", "[::1]:8080", "MSGLOG.LAN:1"] {
      #expect(try status(router, "GET", "/api/streams", [("Host", host)]) == 200, "\(host)")
    }
    for host in ["evil.example", "evil.example:8080", "10.0.0.1", "[::2]", "localhost.", "msglog.lan.evil"] {
      #expect(try status(router, "GET", "/api/streams", [("Host", host)]) == 403, "\(host)")
    }
    #expect(try status(router, "GET", "/api/streams", [("Host", "a/b")]) == 400)
    // HTTP/1.0 may leave Host out; HTTP/1.1 may not.
    #expect(router.respond(to: try Request(method: "GET", target: "/api/streams", version: "HTTP/1.0")).status == 200)
    #expect(router.respond(to: try Request(method: "GET", target: "/api/streams")).status == 400)
  }

  @Test func writesFromElsewhere() throws {
    let router = try router()
    let host = ("Host", "127.0.0.1:8080")
    let json = ("Content-Type", "application/json")
    #expect(try status(router, "POST", "/api/append", [host]) == 403)
    #expect(try status(router, "POST", "/api/append", [host, ("Content-Type", "text/plain")]) == 403)
    #expect(try status(router, "POST", "/api/append", [host, json, ("Origin", "null")]) == 403)
    #expect(try status(router, "POST", "/api/append", [host, json, ("Origin", "http://127.0.0.1:8081")]) == 403)
    #expect(try status(router, "POST", "/api/append", [host, json, ("Sec-Fetch-Site", "cross-site")]) == 403)
    #expect(try status(router, "POST", "/api/append", [host, json, ("Origin", "http://127.0.0.1:8080")]) == 200)
    #expect(
      try status(router, "POST", "/api/append", [host, ("Content-Type", "Application/JSON ; charset=utf-8")]) == 200)
    // Reads are not writes: a cross-site GET is answered (its page cannot read the answer).
    #expect(try status(router, "GET", "/api/streams", [host, ("Sec-Fetch-Site", "cross-site")]) == 200)
  }

  @Test func corsOnlyForAnAllowedOrigin() throws {
    let router = try router { $0.allowedOrigins = ["http://localhost:3000"] }
    let allowed = router.respond(
      to: try Request(
        method: "OPTIONS", target: "/api/move",
        headers: [
          ("Host", "127.0.0.1:8080"), ("Origin", "http://localhost:3000"), ("Access-Control-Request-Method", "POST"),
        ]))
    #expect(allowed.status == 204 && allowed.header("Access-Control-Allow-Origin") == "http://localhost:3000")
    let other = router.respond(
      to: try Request(
        method: "GET", target: "/api/streams", headers: [("Host", "localhost"), ("Origin", "http://localhost:3001")]))
    #expect(other.status == 200 && other.header("Access-Control-Allow-Origin") == nil)
    #expect(throws: ServerError.self) {
      try ServerConfiguration(listen: ListenAddress(parsing: "127.0.0.1:0"), allowedOrigins: ["localhost:3000"])
    }
    #expect(throws: ServerError.self) {
      try ServerConfiguration(listen: ListenAddress(parsing: "127.0.0.1:0"), allowedHosts: ["msglog.lan:80"])
    }
  }

  @Test func theBearerSchemeInAnyCase() throws {
    let token = "0123456789abcdef0123"
    let router = try router { $0.token = token }
    let host = ("Host", "localhost")
    for header in ["Bearer \(token)", "bearer \(token)", "BEARER  \(token) ", "Bearer\t\(token)"] {
      #expect(try status(router, "GET", "/api/streams", [host, ("Authorization", header)]) == 200, "\(header)")
    }
    for header in ["Bearer", "Bearer \(token)0", "Bearer 0123456789abcdef012", "Token \(token)", token] {
      #expect(try status(router, "GET", "/api/streams", [host, ("Authorization", header)]) == 401, "\(header)")
    }
  }
}

@Suite struct FramingTests {
  @Test func framingIsNeverGuessed() {
    #expect(throws: Never.self) { try Framing.check([("Content-Length", "5"), ("content-length", " 5")]) }
    #expect(throws: Never.self) { try Framing.check([("Transfer-Encoding", "chunked")]) }
    #expect(throws: HTTPError.self) { try Framing.check([("Content-Length", "5"), ("Content-Length", "6")]) }
    #expect(throws: HTTPError.self) { try Framing.check([("Content-Length", "5"), ("Transfer-Encoding", "chunked")]) }
    #expect(throws: HTTPError.self) { try Framing.check([("Transfer-Encoding", "gzip, chunked")]) }
    #expect(throws: HTTPError.self) {
      try Framing.check([("Transfer-Encoding", "chunked"), ("Transfer-Encoding", "chunked")])
    }
  }

  @Test(arguments: [
    ("GET / HTTP/1.1\r\n", RequestLine.Verdict.valid),
    ("\r\nPOST /api/append?x=1 HTTP/1.0\n", .valid),
    ("GET / HTTP/1.1", .incomplete),
    ("GARBAGE\r\n", .invalid("the request line must be METHOD TARGET HTTP/1.1, with one space between each")),
    ("GET /\r\n", .invalid("the request line must be METHOD TARGET HTTP/1.1, with one space between each")),
    ("GET / a HTTP/1.1\r\n", .invalid("the request line must be METHOD TARGET HTTP/1.1, with one space between each")),
    ("GET  / HTTP/1.1\r\n", .invalid("the request line must be METHOD TARGET HTTP/1.1, with one space between each")),
    ("G(T / HTTP/1.1\r\n", .invalid("the request method is not a token")),
    ("GET /\u{7F} HTTP/1.1\r\n", .invalid("the request target has a character that must be %-encoded")),
    ("GET / HTTP/1.x\r\n", .invalid("the request line does not end with an HTTP version")),
  ])
  func requestLines(_ line: String, _ verdict: RequestLine.Verdict) {
    let bytes = Array(line.utf8)
    #expect(bytes.withUnsafeBytes { RequestLine.check($0) } == verdict)
  }
}

/// A streamed answer holds at most its buffer's worth beyond what the
/// client took, and its producer stops when the client goes.
@Suite struct ResponseStreamTests {
  @Test func theProducerWaitsForTheReader() throws {
    let written = Guarded(0)
    let chunk = [UInt8](repeating: 7, count: 4096)
    let stream = try ResponseStream.start { out in
      for _ in 0..<1024 {  // 4 MiB
        try out.write(chunk)
        written.update { $0 += chunk.count }
      }
    }
    var read = 0
    var buffer = [UInt8](repeating: 0, count: 1000)
    while true {
      let result = buffer.withUnsafeMutableBytes { stream.read(into: $0.baseAddress!, max: $0.count) }
      guard case .bytes(let count) = result else {
        #expect(result == .end)
        break
      }
      read += count
      let ahead = written.read { $0 } - read
      #expect(ahead <= ResponseStream.capacity, "the producer is \(ahead) bytes ahead")
      if ahead > ResponseStream.capacity { break }
    }
    #expect(read == 4 << 20)
  }

  @Test func aCancelledStreamStopsItsProducer() throws {
    let ended = Guarded<Bool?>(nil)
    let stream = try ResponseStream.start { out in
      do {
        while true { try out.write([UInt8](repeating: 1, count: 4096)) }
      } catch {
        ended.update { $0 = true }
        throw error
      }
    }
    stream.cancel()
    #expect(ended.wait(until: { $0 != nil }, deadline: .after(seconds: 30)) { value, _ in value } == true)
  }

  /// An error before the first byte is the answer's status, not a cut 200.
  @Test func anEarlyErrorIsTheStatus() {
    #expect(throws: HTTPError(status: 404, message: "no stream 'x'")) {
      try ResponseStream.start { _ in throw HTTPError(status: 404, message: "no stream 'x'") }
    }
  }
}
