import Foundation
import Testing

@testable import MsglogServer

/// The request parser on bytes, in process: what it accepts, what it
/// refuses and with which status, and that where a request ends never
/// depends on how its bytes were cut into reads.
@Suite struct RequestParserTests {
  /// Every event the decoder makes of `text`, fed in pieces of `step`
  /// bytes, reading every body it is shown.
  static func events(_ text: String, step: Int = .max) -> [String] {
    let bytes = Array(text.utf8)
    var decoder = RequestDecoder(bodyLimit: 1 << 20)
    var buffer: [UInt8] = []
    var out: [String] = []
    var offset = 0
    var stopped = false
    while !stopped {
      let more = bytes[offset..<min(bytes.count, offset + step)]
      offset += more.count
      buffer += more
      while true {
        let (taken, event) = buffer.withUnsafeBytes { decoder.decode($0) }
        buffer.removeFirst(taken)
        guard let event else {
          if taken == 0 { break }
          continue
        }
        switch event {
        case .head(let head):
          out.append("head \(head.method) \(head.target) \(head.framing)")
          if case .request(_, let body)? = decoder.readBody(of: head) {
            out.append("request \(String(decoding: body, as: UTF8.self))")
          }
        case .request(_, let body): out.append("request \(String(decoding: body, as: UTF8.self))")
        case .refused(let error):
          out.append("refused \(error.status)")
          stopped = true
        }
        if stopped { break }
      }
      if offset >= bytes.count { break }
    }
    return out
  }

  static let host = "Host: localhost\r\n"

  @Test(arguments: [
    ("GET / HTTP/1.1\r\n\(host)\r\n", ["head GET / none", "request "]),
    ("\r\nPOST /api/append?x=1 HTTP/1.0\nContent-Length: 2\n\nhi", ["head POST /api/append?x=1 length(2)", "request hi"]),
    ("GET http://localhost:8080/api/streams HTTP/1.1\r\n\r\n", ["head GET /api/streams none", "request "]),
    // Pipelined: each in turn.
    ("GET /a HTTP/1.1\r\n\(host)\r\nGET /b HTTP/1.1\r\n\(host)\r\n", ["head GET /a none", "request ", "head GET /b none", "request "]),
    (
      "POST / HTTP/1.1\r\n\(host)Transfer-Encoding: chunked\r\n\r\n5;ext=1\r\nhello\r\n1\r\n!\r\n0\r\nTrailer: x\r\n\r\n",
      ["head POST / chunked", "request hello!"]
    ),
  ])
  func accepted(_ text: String, _ expected: [String]) {
    #expect(Self.events(text) == expected)
    // The same, a byte at a time.
    #expect(Self.events(text, step: 1) == expected, "byte by byte")
  }

  @Test(arguments: [
    // Smuggling by obs-fold (issue 24, item 1).
    ("POST / HTTP/1.1\r\n\(host)Content-Length:\r\n 112\r\n\r\n", 400),
    ("POST / HTTP/1.1\r\n\(host)Content-Length: 5\r\n 0\r\n\r\n", 400),
    ("POST / HTTP/1.1\r\n\(host)Transfer-Encoding:\r\n chunked\r\n\r\n", 400),
    ("POST / HTTP/1.1\r\n\(host)Transfer-Encoding: chunked\r\n , identity\r\n\r\n", 400),
    ("POST / HTTP/1.1\r\n\(host)Content-Length: \r\n\r\n", 400),
    ("POST / HTTP/1.1\r\n\(host)Content-Length: 5x\r\n\r\n", 400),
    ("POST / HTTP/1.1\r\n\(host)Content-Length: +5\r\n\r\n", 400),
    ("POST / HTTP/1.1\r\n\(host)Content-Length: 5, 5\r\n\r\n", 400),
    ("POST / HTTP/1.1\r\n\(host)Transfer-Encoding: gzip, chunked\r\n\r\n", 400),
    ("POST / HTTP/1.1\r\n\(host)Transfer-Encoding: chunked, identity\r\n\r\n", 400),
    ("POST / HTTP/1.1\r\n\(host)Content-Length: 4\r\nTransfer-Encoding: chunked\r\n\r\n", 400),
    ("GET / HTTP/1.1\r\n\(host)\(host)\r\n", 400),
    ("GET / HTTP/1.1\r\n\(host)Authorization: Bearer a\r\nAuthorization: Bearer b\r\n\r\n", 400),
    ("GET / HTTP/1.1\r\n\(host)Origin: http://a\r\nOrigin: http://b\r\n\r\n", 400),
    ("GET / HTTP/1.1\r\n\(host)Content-Type: a/b\r\ncontent-type: c/d\r\n\r\n", 400),
    ("GET / HTTP/1.1\r\n\(host)Sec-Fetch-Site: same-origin\r\nSec-Fetch-Site: cross-site\r\n\r\n", 400),
    ("GET / HTTP/1.1\r\n\(host)X-A : b\r\n\r\n", 400),
    ("GET / HTTP/1.1\r\n\(host)X-A: b\rc\r\n\r\n", 400),
    ("GET / HTTP/1.1\r\n\(host)X-A: b\u{0}c\r\n\r\n", 400),
    ("GET / HTTP/1.1\r\n\(host)NoColon\r\n\r\n", 400),
    ("GET / HTTP/2.0\r\n\r\n", 505),
    ("GET / HTTP/1.1\r\n\(host)Expect: something\r\n\r\n", 417),
    ("GET /" + String(repeating: "a", count: 9000) + " HTTP/1.1\r\n\r\n", 414),
    ("GET / HTTP/1.1\r\n\(host)X-Big: " + String(repeating: "a", count: 17000) + "\r\n\r\n", 431),
    ("GET / HTTP/1.1\r\n" + (0..<101).map { "X-\($0): a\r\n" }.joined() + "\r\n", 431),
    ("GET ftp://localhost/ HTTP/1.1\r\n\r\n", 400),
    // Chunked bodies: malformed sizes, a chunk longer than its size, a long extension or trailer.
    ("POST / HTTP/1.1\r\n\(host)Transfer-Encoding: chunked\r\n\r\nzz\r\n", 400),
    ("POST / HTTP/1.1\r\n\(host)Transfer-Encoding: chunked\r\n\r\n2\r\nabc\r\n", 400),
    ("POST / HTTP/1.1\r\n\(host)Transfer-Encoding: chunked\r\n\r\n1;" + String(repeating: "e", count: 100_000) + "\r\n", 400),
    ("POST / HTTP/1.1\r\n\(host)Transfer-Encoding: chunked\r\n\r\n0\r\nT: " + String(repeating: "t", count: 9000) + "\r\n\r\n", 400),
    ("POST / HTTP/1.1\r\n\(host)Transfer-Encoding: chunked\r\n\r\nffffffffffffffffff\r\n", 400),
    ("POST / HTTP/1.1\r\n\(host)Transfer-Encoding: chunked\r\n\r\n200000\r\n", 413),
    // A chunk extension's and a trailer field's grammar is checked, their
    // meaning ignored (RFC 9112 7.1.1): the client's rule too (one decoder).
    ("POST / HTTP/1.1\r\n\(host)Transfer-Encoding: chunked\r\n\r\n5;\r\nhello\r\n0\r\n\r\n", 400),
    ("POST / HTTP/1.1\r\n\(host)Transfer-Encoding: chunked\r\n\r\n5;a=\"open\r\nhello\r\n0\r\n\r\n", 400),
    ("POST / HTTP/1.1\r\n\(host)Transfer-Encoding: chunked\r\n\r\n5 x\r\nhello\r\n0\r\n\r\n", 400),
    ("POST / HTTP/1.1\r\n\(host)Transfer-Encoding: chunked\r\n\r\n0\r\nBad Trailer\r\n\r\n", 400),
  ])
  func refused(_ text: String, _ status: Int) {
    let events = Self.events(text)
    #expect(events.last == "refused \(status)", "\(events)")
    #expect(Self.events(text, step: 7) == events, "in pieces of 7")
  }

  /// The request-line verdicts of the check that stood in front of libmicrohttpd, kept.
  @Test(arguments: [
    ("GARBAGE\r\n\r\n", "the request line must be METHOD TARGET HTTP/1.1, with one space between each"),
    ("GET /\r\n\r\n", "the request line must be METHOD TARGET HTTP/1.1, with one space between each"),
    ("GET / a HTTP/1.1\r\n\r\n", "the request line must be METHOD TARGET HTTP/1.1, with one space between each"),
    ("GET  / HTTP/1.1\r\n\r\n", "the request line must be METHOD TARGET HTTP/1.1, with one space between each"),
    ("G(T / HTTP/1.1\r\n\r\n", "the request method is not a token"),
    ("GET /\u{7F} HTTP/1.1\r\n\r\n", "the request target has a character that must be %-encoded"),
    ("GET / HTTP/1.x\r\n\r\n", "the request line does not end with an HTTP version"),
  ])
  func requestLines(_ line: String, _ message: String) {
    let bytes = Array(line.utf8)
    guard case .refused(let error) = bytes.withUnsafeBytes({ RequestHead.parse($0) }) else {
      Issue.record("\(line) was not refused")
      return
    }
    #expect(error.status == 400 && error.message == message)
    #expect(error.headers.contains { $0 == ("Connection", "close") })
  }

  @Test func anIncompleteHeadWaits() {
    for text in ["GET / HTTP/1.1", "GET / HTTP/1.1\r\nHost: a\r\n", "GET / HTTP/1.1\r\nHost: a\r\n\r"] {
      let bytes = Array(text.utf8)
      guard case .incomplete = bytes.withUnsafeBytes({ RequestHead.parse($0) }) else {
        Issue.record("\(text) was not incomplete")
        continue
      }
    }
  }

  @Test func keepAliveAndContinue() {
    func head(_ text: String) -> RequestHead? {
      let bytes = Array(text.utf8)
      guard case .head(let head, _) = bytes.withUnsafeBytes({ RequestHead.parse($0) }) else { return nil }
      return head
    }
    #expect(head("GET / HTTP/1.1\r\n\r\n")?.keepAlive == true)
    #expect(head("GET / HTTP/1.1\r\nConnection: close\r\n\r\n")?.keepAlive == false)
    #expect(head("GET / HTTP/1.0\r\n\r\n")?.keepAlive == false)
    #expect(head("GET / HTTP/1.0\r\nConnection: Keep-Alive\r\n\r\n")?.keepAlive == true)
    #expect(head("POST / HTTP/1.1\r\nExpect: 100-continue\r\nContent-Length: 1\r\n\r\n")?.expectsContinue == true)
    // Absolute form: the target's authority is the Host, whatever Host says.
    let absolute = head("GET http://127.0.0.1:8080?stream=a HTTP/1.1\r\nHost: evil.example\r\n\r\n")
    #expect(absolute?.target == "/?stream=a" && absolute?.header("host") == "127.0.0.1:8080")
  }
}
