import Testing

@testable import MsglogHTTPWire

/// The server's requests and the client's answers are read by one grammar:
/// a field line is accepted or refused, with the same words, whichever kind
/// of head it stands in, and a chunked body decodes the same under either
/// end's bounds. The kinds differ only where RFC 9112 §2.2 lets a
/// recipient choose (a bare LF, empty lines before a request).
@Suite struct OneGrammarTests {
  static let limits = HTTPHeadParser.Limits(startLine: 8192, fields: 16384, fieldCount: 100)

  /// The fields of `line` in a request head and in an answer head, or the
  /// reason each was refused.
  static func bothKinds(_ line: String) -> (request: String, response: String) {
    func outcome(_ text: String, _ parse: (UnsafeRawBufferPointer) throws -> [(String, String)]?) -> String {
      do {
        guard let fields = try Array(text.utf8).withUnsafeBytes(parse) else { return "incomplete" }
        return fields.map { "\($0.0)=\($0.1)" }.joined(separator: ",")
      } catch let error as HTTPSyntaxError {
        return "refused: \(error.reason)"
      } catch {
        return "\(error)"
      }
    }
    return (
      outcome("GET / HTTP/1.1\r\n\(line)\r\n\r\n") { try HTTPHeadParser.request($0, limits: limits)?.fields },
      outcome("HTTP/1.1 200 OK\r\n\(line)\r\n\r\n") { try HTTPHeadParser.response($0, limits: limits)?.fields }
    )
  }

  @Test(arguments: [
    ("A:  b c \t", "A=b c"),
    ("X-Empty:", "X-Empty="),
    ("A: b\r\n c", "refused: a header line is folded"),
    ("A: b\r\n\tc", "refused: a header line is folded"),
    ("A : b", "refused: a header name is followed by whitespace before its colon"),
    ("A(b): c", "refused: a header name has a character a name cannot have"),
    (": b", "refused: a header line has an empty name"),
    ("NoColon", "refused: a header line has no colon"),
    ("A: b\u{1}c", "refused: the header A has a control character"),
    ("A: b\rc", "refused: a line has a CR that does not end it"),
  ])
  func aFieldLineIsReadTheSameInEitherKind(_ line: String, _ expected: String) {
    let (request, response) = Self.bothKinds(line)
    #expect(request == response, "request: \(request); answer: \(response)")
    #expect(request.hasPrefix(expected), "\(request)")
  }

  @Test func theKindsDifferOnlyWhereTheRFCLetsARecipientChoose() throws {
    let bareLF = Array("GET / HTTP/1.1\nHost: a\n\n".utf8)
    let head = try bareLF.withUnsafeBytes { try HTTPHeadParser.request($0, limits: Self.limits) }
    #expect(head?.fields.first?.0 == "Host" && head?.length == bareLF.count)
    // In every line of a head or in none: mixed, a field hides behind another.
    for mixed in [
      "GET / HTTP/1.1\r\nHost: a\nX: b\r\n\r\n", "GET / HTTP/1.1\nHost: a\r\n\n", "GET / HTTP/1.1\nHost: a\n\r\n",
    ] {
      #expect(throws: HTTPSyntaxError("the head ends some lines with CR LF and others with a bare LF"), "\(mixed)") {
        try Array(mixed.utf8).withUnsafeBytes { try HTTPHeadParser.request($0, limits: Self.limits) }
      }
    }
    #expect(throws: HTTPSyntaxError("a line ends with a bare LF")) {
      try Array("HTTP/1.1 200 OK\nHost: a\n\n".utf8).withUnsafeBytes {
        try HTTPHeadParser.response($0, limits: Self.limits)
      }
    }
    let leading = Array("\r\n\r\nGET / HTTP/1.1\r\n\r\n".utf8)
    #expect(try leading.withUnsafeBytes { try HTTPHeadParser.request($0, limits: Self.limits) }?.start.method == "GET")
    #expect(throws: HTTPSyntaxError("the answer has no status line")) {
      try Array("\r\nHTTP/1.1 200 OK\r\n\r\n".utf8).withUnsafeBytes {
        try HTTPHeadParser.response($0, limits: Self.limits)
      }
    }
  }

  /// A chunked body under the server's bounds and under the client's: the
  /// same data, or the same refusal (extensions' grammar checked, their
  /// meaning ignored).
  @Test(arguments: [
    ("5;name=value;flag\r\nhello\r\n0\r\n\r\n", "hello"),
    ("5 ; q=\"a \\\" b\"\r\nhello\r\n0;last\r\nT: 1\r\n\r\n", "hello"),
    ("5;\r\nhello\r\n0\r\n\r\n", "refused: a chunk extension is malformed"),
    ("5;a=\"open\r\nhello\r\n0\r\n\r\n", "refused: a chunk extension is malformed"),
    ("5;a=b c\r\nhello\r\n0\r\n\r\n", "refused: a chunk extension is malformed"),
    ("0\r\nBad Trailer\r\n\r\n", "refused: a header line has no colon"),
    ("5\r\nhelloX\r\n", "refused: a chunk is longer than its size"),
  ])
  func aChunkedBodyDecodesTheSameUnderEitherEndsBounds(_ body: String, _ expected: String) {
    func decode(_ decoder: ChunkedDecoder) -> String {
      var decoder = decoder
      var data: [UInt8] = []
      do {
        _ = try Array(body.utf8).withUnsafeBytes { try decoder.decode($0) { data += $0 } }
      } catch let error as HTTPSyntaxError {
        return "refused: \(error.reason)"
      } catch {
        return "\(error)"
      }
      return String(decoding: data, as: UTF8.self)
    }
    let server = decode(ChunkedDecoder(lineLimit: 4096, trailerLimit: 8192, bodyLimit: 1 << 20))
    let client = decode(ChunkedDecoder())
    #expect(server == client && server == expected, "server: \(server); client: \(client)")
  }
}
