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
    // A name of letters, digits and `-._`: anything else, a letter outside ASCII included, is malformed.
    for host in ["exämple.lan", "localhost\u{212A}", "a b", "a@b", "a:8080x", "[::1", "ｌｏｃａｌｈｏｓｔ"] {
      #expect(try status(router, "GET", "/api/streams", [("Host", host)]) == 400, "\(host)")
    }
    #expect(try status(router, "GET", "/api/streams", [("Host", "My_Host-1.lan")]) == 403)
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

/// A streamed answer is pulled a piece at a time: each piece is about
/// `capacity` bytes, the producer runs only when asked, stops when the
/// client goes, and an error before the first byte is the answer's status.
@Suite struct ResponseStreamTests {
  @Test func theProducerRunsOnlyWhenAsked() throws {
    let written = Guarded(0)
    // 1024 JSON strings of 4094 letters and their quotes, after a "[": 4 MiB and a byte.
    let text = String(repeating: "m", count: 4094)
    let chunk = [UInt8](repeating: 7, count: 4096)
    var left = 1024
    let stream = try ResponseStream.start { json in
      if left == 1024 {
        json.beginArray()
        written.update { $0 += 1 }
      }
      json.value(text)
      written.update { $0 += chunk.count + (left == 1024 ? 0 : 1) }
      left -= 1
      if left == 0 {
        json.endArray()
        written.update { $0 += 1 }
      }
      return left > 0
    }
    var read = 0
    while true {
      let before = written.read { $0 }
      let piece = stream.next()
      guard case .bytes(let bytes, let last) = piece else {
        Issue.record("unexpected \(piece)")
        break
      }
      read += bytes.count
      // What it wrote for this piece, beyond what was taken, is one piece.
      let ahead = written.read { $0 } - before
      #expect(ahead <= ResponseStream.capacity + chunk.count, "the producer ran \(ahead) bytes ahead")
      #expect(written.read { $0 } == read, "the producer ran while nobody asked")
      if last { break }
    }
    #expect(read == (4 << 20) + 1023 + 2)
  }

  @Test func aCancelledStreamStopsItsProducer() throws {
    let calls = Guarded(0)
    let stream = try ResponseStream.start { json in
      json.raw("x\n")
      calls.update { $0 += 1 }
      return true
    }
    stream.cancel()
    let before = calls.read { $0 }
    #expect(stream.next() == .failed)
    #expect(calls.read { $0 } == before)
  }

  /// An error before the first byte is the answer's status, not a cut 200.
  @Test func anEarlyErrorIsTheStatus() {
    #expect(throws: HTTPError(status: 404, message: "no stream 'x'")) {
      try ResponseStream.start { _ in throw HTTPError(status: 404, message: "no stream 'x'") }
    }
  }
}
