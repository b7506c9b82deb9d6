import MsglogHTTPWire
import Testing

@testable import MsglogHTTPClient

/// The strict parsers, on bytes: what an answer may look like, and each
/// way it may not.
@Suite struct WireTests {
  private func head(_ text: String) throws -> HTTPResponseHead {
    guard let parsed = try HTTPClient.responseHead(Array(text.utf8)[...], limit: 65_536) else {
      throw HTTPSyntaxError("incomplete")
    }
    return parsed.head
  }

  private func reason(_ text: String) -> String? {
    do {
      _ = try head(text)
      return nil
    } catch let error as HTTPSyntaxError {
      return error.reason
    } catch {
      return "\(error)"
    }
  }

  @Test func aHeadIsReadFieldByField() throws {
    let parsed = try head("HTTP/1.1 200 OK\r\nContent-Type:  text/plain \r\nX-Empty:\r\nSet: a\r\nset: b\r\n\r\n")
    #expect(parsed.version == "HTTP/1.1" && parsed.status == 200 && parsed.reason == "OK")
    #expect(parsed.value(of: "content-type") == "text/plain" && parsed.value(of: "x-empty") == "")
    #expect(parsed.values(of: "SET") == ["a", "b"])
    #expect(try head("HTTP/1.0 404 Not Found Here\r\n\r\n").reason == "Not Found Here")
    // A missing reason, with or without its space.
    #expect(try head("HTTP/1.1 204 \r\n\r\n").status == 204)
    #expect(try head("HTTP/1.1 204\r\n\r\n").status == 204)
    // obs-text in a value passes (it is the caller's to read).
    #expect(try head("HTTP/1.1 200 OK\r\nX: caf\u{E9}\r\n\r\n").value(of: "x") == "caf\u{E9}")
    // Not all arrived yet: nil, no error.
    #expect(try HTTPClient.responseHead(Array("HTTP/1.1 200 OK\r\nA: b\r\n".utf8)[...], limit: 100) == nil)
  }

  @Test(arguments: [
    ("HTTP/1.1 200 OK\nA: b\r\n\r\n", "bare LF"),
    ("HTTP/1.1 200 OK\r\nA: b\n\n", "bare LF"),
    ("HTTP/1.1 200 OK\r\nA: b\rc\r\n\r\n", "CR that does not end it"),
    ("HTTP/1.1 200 OK\r\nA : b\r\n\r\n", "whitespace before its colon"),
    ("HTTP/1.1 200 OK\r\nA: b\r\n  c\r\n\r\n", "folded"),
    ("HTTP/1.1 200 OK\r\nA\r\n\r\n", "no colon"),
    ("HTTP/1.1 200 OK\r\n: b\r\n\r\n", "empty name"),
    ("HTTP/1.1 200 OK\r\nA(b): c\r\n\r\n", "character a name cannot have"),
    ("HTTP/1.1 200 OK\r\nA: b\u{01}c\r\n\r\n", "control character"),
    ("HTTP/2 200 OK\r\n\r\n", "not HTTP/1.1 or HTTP/1.0"),
    ("HTTP/1.1 20 OK\r\n\r\n", "three digits"),
    ("HTTP/1.1 600 Odd\r\n\r\n", "three digits"),
    ("HTTP/1.1 2000 OK\r\n\r\n", "three digits"),
    ("ICY 200 OK\r\n\r\n", "does not begin with an HTTP/1 status line"),
    ("\r\nHTTP/1.1 200 OK\r\n\r\n", "no status line"),
  ])
  func malformedHeads(_ text: String, _ expected: String) {
    let found = reason(text)
    #expect(found?.contains(expected) == true, "\(String(describing: found))")
  }

  @Test func aHeadLongerThanTheLimitIsRefused() {
    let text = Array(("HTTP/1.1 200 OK\r\nA: " + String(repeating: "x", count: 200)).utf8)
    #expect(throws: HTTPSyntaxError("the head is longer than 100 bytes", fault: .fieldsTooLarge)) {
      try HTTPClient.responseHead(text[...], limit: 100)
    }
  }

  /// A chunked body fed one byte at a time and all at once decodes alike.
  @Test func chunkedBodiesWithExtensionsAndTrailers() throws {
    let body = Array(
      ("5;name=value;flag\r\nhello\r\n6 ; q=\"a \\\" b\"\r\n world\r\n" + "A\r\n0123456789\r\n"
        + "0;last\r\nTrailer-One: 1\r\nTrailer-Two: 2\r\n\r\nNEXT").utf8)
    for step in [1, 3, body.count] {
      var decoder = ChunkedDecoder()
      var data: [UInt8] = []
      var offset = 0
      var taken = 0
      while offset < body.count, !decoder.isDone {
        let piece = body[offset..<min(body.count, offset + step)]
        let used = try piece.withUnsafeBytes { try decoder.decode($0) { data += $0 } }
        taken += used
        offset += piece.count
        if decoder.isDone { break }
        #expect(used == piece.count)
      }
      #expect(decoder.isDone)
      #expect(String(decoding: data, as: UTF8.self) == "hello world0123456789")
      // What follows the body is not taken.
      #expect(taken == body.count - 4, "step \(step)")
    }
  }

  @Test(arguments: [
    ("x\r\n", "not a hexadecimal number"),
    ("\r\n", "not a hexadecimal number"),
    ("-1\r\n", "not a hexadecimal number"),
    ("5\nhello\r\n", "bare LF"),
    ("5\r\nhelloX\r\n", "longer than its size"),
    ("5\r\nhello\rX", "bare CR"),
    ("5;\r\nhello\r\n", "extension is malformed"),
    ("5;a=\"open\r\nhello\r\n", "extension is malformed"),
    ("5 x\r\nhello\r\n", "extension is malformed"),
    ("1000000000000000\r\n", "more than 15 hex digits"),
    ("0\r\nBad Trailer\r\n\r\n", "no colon"),
  ])
  func malformedChunkedBodies(_ text: String, _ expected: String) {
    var decoder = ChunkedDecoder()
    do {
      _ = try Array(text.utf8).withUnsafeBytes { try decoder.decode($0) { _ in } }
      Issue.record("accepted \(text.debugDescription)")
    } catch let error as HTTPSyntaxError {
      #expect(error.reason.contains(expected), "\(error.reason)")
    } catch {
      Issue.record("\(error)")
    }
  }

  @Test func framingIsNeverGuessed() throws {
    func framing(_ headers: [(String, String)], status: Int = 200, method: String = "GET") throws -> BodyFraming {
      try BodyFraming.of(
        HTTPResponseHead(status: status, headers: headers.map { HTTPHeader($0.0, $0.1) }), method: method)
    }
    #expect(try framing([("Content-Length", "12")]) == .length(12))
    #expect(try framing([("Content-Length", "12"), ("content-length", "12")]) == .length(12))
    #expect(try framing([("Content-Length", "12, 12")]) == .length(12))
    #expect(try framing([("Transfer-Encoding", "Chunked")]) == .chunked)
    #expect(try framing([]) == .untilClose)
    #expect(try framing([("Content-Length", "12")], status: 204) == .none)
    #expect(try framing([("Content-Length", "12")], status: 304) == .none)
    #expect(try framing([("Content-Length", "12")], method: "HEAD") == .none)
    for (headers, expected) in [
      ([("Content-Length", "12"), ("Content-Length", "13")], "different Content-Length"),
      ([("Content-Length", "12, 13")], "different Content-Length"),
      ([("Content-Length", "+12")], "not a number"),
      ([("Content-Length", "")], "not a number"),
      ([("Content-Length", "1e3")], "not a number"),
      ([("Content-Length", "12"), ("Transfer-Encoding", "chunked")], "both Content-Length and Transfer-Encoding"),
      ([("Transfer-Encoding", "gzip, chunked")], "other than chunked"),
      ([("Transfer-Encoding", "chunked, chunked")], "other than chunked"),
      ([("Transfer-Encoding", "identity")], "other than chunked"),
    ] {
      do {
        _ = try framing(headers)
        Issue.record("\(headers) framed")
      } catch let error as HTTPSyntaxError {
        #expect(error.reason.contains(expected), "\(error.reason)")
      }
    }
  }

  /// The WHATWG rules, on the bytes `/api/follow` and others send.
  @Test func serverSentEventsLineByLine() throws {
    let text =
      "\u{FEFF}: keep-alive\r\nid: 7\r\ndata: {\"seq\":7}\r\n\r\n" + "data:two\ndata: lines\nevent: note\n\n"
      + "id: 9\rdata: cr\r\r" + "retry: 100\n\n" + ": a comment only\n\n" + "data\n\n" + "data: unfinished"
    let expected = [
      ServerSentEvent(id: "7", data: "{\"seq\":7}"), ServerSentEvent(id: "7", event: "note", data: "two\nlines"),
      ServerSentEvent(id: "9", data: "cr"), ServerSentEvent(id: "9", data: ""),
    ]
    for step in [1, 2, 5, text.utf8.count] {
      var parser = ServerSentEventParser()
      var events: [ServerSentEvent] = []
      let bytes = Array(text.utf8)
      var offset = 0
      while offset < bytes.count {
        events += try parser.feed(bytes[offset..<min(bytes.count, offset + step)])
        offset += step
      }
      #expect(events == expected, "step \(step)")
      #expect(parser.lastEventID == "9")
    }
    var bounded = ServerSentEventParser(lineLimit: 16)
    #expect(throws: HTTPSyntaxError.self) { try bounded.feed(Array("data: 0123456789abcdefg".utf8)) }
  }

  @Test func requestsAreWrittenWithTheClientsFields() throws {
    let url = try HTTPURL("http://[::1]:8080/base")
    let request = HTTPRequest.post("/api/append?x=1", json: Array(#"{"text":"hi"}"#.utf8))
    let text = String(
      decoding: try request.encoded(for: url, token: "t0ken", userAgent: "msglog/9.9"), as: UTF8.self)
    #expect(
      text
        == "POST /base/api/append?x=1 HTTP/1.1\r\nHost: [::1]:8080\r\nUser-Agent: msglog/9.9\r\n"
        + "Authorization: Bearer t0ken\r\nContent-Type: application/json\r\nAccept: application/json\r\n"
        + "Content-Length: 13\r\n\r\n{\"text\":\"hi\"}")
    let get = String(
      decoding: try HTTPRequest.get("/api/sync").encoded(for: try HTTPURL("https://h"), token: nil, userAgent: "u"),
      as: UTF8.self)
    #expect(get == "GET /api/sync HTTP/1.1\r\nHost: h\r\nUser-Agent: u\r\n\r\n")
    // A token with a line break would add a header: refused, without repeating it.
    do {
      _ = try HTTPRequest.get("/").encoded(for: url, token: "abc\r\nX-Evil: 1", userAgent: "u")
      Issue.record("a token with CRLF was written")
    } catch let error as HTTPClientError {
      guard case .invalidRequest(let message) = error else { throw error }
      #expect(message.contains("Authorization") && !message.contains("Evil"), "\(message)")
    }
    #expect(throws: HTTPClientError.self) {
      try HTTPRequest.get("api/no-slash").encoded(for: url, token: nil, userAgent: "u")
    }
    #expect(throws: HTTPClientError.self) {
      try HTTPRequest.get("/a b").encoded(for: url, token: nil, userAgent: "u")
    }
  }
}
