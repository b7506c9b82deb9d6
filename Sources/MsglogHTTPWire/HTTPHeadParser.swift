/// Reads a message's head (RFC 9112 §2–5) strictly, for both ends: the
/// server's requests and the client's answers go through the same lines,
/// the same field grammar and the same bounds. Field names are tokens with
/// no space before the colon, no line folding (obs-fold), no control
/// character in a value, a CR only before LF. Nothing is repaired or
/// guessed: where a message ends is decided by its bytes alone, as a proxy
/// in front must decide it too.
///
/// The two kinds differ only where RFC 9112 §2.2 lets a recipient choose:
/// a server takes a bare LF as a line's end (in every line of a head, or
/// in none) and skips a few empty lines before a request (clients have
/// sent both); the client, which only ever
/// reads `msglog serve` or a proxy, refuses a bare LF, since smuggling
/// lives in such differences.
///
/// What the fields mean (framing, keep-alive, `Expect`) is each end's own
/// business: `RequestHead` on the server, `BodyFraming.of` in the client.
package enum HTTPHeadParser {
  package enum Kind: Sendable {
    case request, response

    /// A bare LF ends a line (RFC 9112 §2.2 lets a recipient choose): a
    /// server takes it, as clients have sent it; the client, which reads
    /// only `msglog serve` or a proxy, refuses it.
    var takesBareLF: Bool { self == .request }

    /// A few empty lines before the start line are skipped (§2.2: a
    /// server should; an answer has none).
    var skipsEmptyLinesFirst: Bool { self == .request }

    /// Where the header section's bound counts from: a request's after
    /// its request line (which has a bound and a status of its own, 414),
    /// an answer's from the head's first byte.
    var boundsTheWholeHead: Bool { self == .response }

    /// What a start line over its bound is called.
    func startLineTooLong(_ limit: Int) -> String {
      self == .request ? "the request line is over \(limit) bytes" : "the head is longer than \(limit) bytes"
    }

    /// What a header section over its bound is called.
    func fieldsTooLarge(_ limit: Int) -> String {
      self == .request
        ? "the request's header fields are over \(limit) bytes" : "the head is longer than \(limit) bytes"
    }
  }

  /// How long a head may be; over a bound is a `startLineTooLong` or
  /// `fieldsTooLarge` fault.
  package struct Limits: Sendable {
    /// The request or status line's bytes.
    package var startLine: Int
    /// The header section's bytes, after the start line (a response's:
    /// from the head's first byte).
    package var fields: Int
    /// How many header fields.
    package var fieldCount: Int

    package init(startLine: Int, fields: Int, fieldCount: Int = .max) {
      self.startLine = startLine
      self.fields = fields
      self.fieldCount = fieldCount
    }

    /// The whole head (start line and fields) at most `bytes` long.
    package static func head(_ bytes: Int) -> Limits {
      Limits(startLine: bytes, fields: bytes, fieldCount: .max)
    }
  }

  /// `METHOD SP TARGET SP HTTP/1.x`, as sent.
  package struct RequestLine: Sendable {
    package var method: String
    package var target: String
    /// `HTTP/1.1` or `HTTP/1.0`.
    package var version: String
  }

  /// `HTTP/1.x SP code [SP reason]`.
  package struct StatusLine: Sendable {
    package var version: String
    package var status: Int
    package var reason: String
  }

  /// A head: its start line, its fields in order (names as written), and
  /// how many bytes it took, its empty line included (the body starts
  /// after them).
  package struct Head<StartLine>: Sendable where StartLine: Sendable {
    package var start: StartLine
    package var fields: [(String, String)]
    package var length: Int
  }

  /// The request head at the start of `bytes`; nil when not all of it has
  /// arrived.
  package static func request(_ bytes: UnsafeRawBufferPointer, limits: Limits) throws(HTTPSyntaxError)
    -> Head<RequestLine>?
  {
    try parse(bytes, .request, limits, requestLine)
  }

  /// The answer head at the start of `bytes`; nil when not all of it has
  /// arrived.
  package static func response(_ bytes: UnsafeRawBufferPointer, limits: Limits) throws(HTTPSyntaxError)
    -> Head<StatusLine>?
  {
    try parse(bytes, .response, limits, statusLine)
  }

  private static func parse<Line>(
    _ bytes: UnsafeRawBufferPointer, _ kind: Kind, _ limits: Limits,
    _ startLine: (UnsafeRawBufferPointer) throws(HTTPSyntaxError) -> Line
  ) throws(HTTPSyntaxError) -> Head<Line>? {
    var start = 0
    if kind.skipsEmptyLinesFirst {
      while start < bytes.count, bytes[start] == cr || bytes[start] == lf {
        start += 1
        if start > 64 { throw HTTPSyntaxError("the request starts with too many empty lines") }
      }
    }
    let lineEnd: (content: Int, next: Int)
    switch try scanLine(bytes, from: start, limit: limits.startLine, kind) {
    case .line(let content, let next): lineEnd = (content, next)
    case .needMore: return nil
    case .tooLong: throw HTTPSyntaxError(kind.startLineTooLong(limits.startLine), fault: .startLineTooLong)
    }
    let line = try startLine(UnsafeRawBufferPointer(rebasing: bytes[start..<lineEnd.content]))
    var fields: [(String, String)] = []
    var position = lineEnd.next
    let fieldsStart = kind.boundsTheWholeHead ? start : position
    // A head ends its lines one way throughout: a bare LF among CR LFs (or
    // the other way round) is how a field is hidden from a proxy that keeps
    // `x\nContent-Length: 16` as one value (a helper's attack found it
    // read as a field of its own).
    let bareLF = lineEnd.next - lineEnd.content == 1
    while true {
      let end: (content: Int, next: Int)
      switch try scanLine(bytes, from: position, limit: limits.fields - (position - fieldsStart), kind) {
      case .line(let content, let next): end = (content, next)
      case .needMore: return nil
      case .tooLong: throw HTTPSyntaxError(kind.fieldsTooLarge(limits.fields), fault: .fieldsTooLarge)
      }
      guard (end.next - end.content == 1) == bareLF else {
        throw HTTPSyntaxError("the head ends some lines with CR LF and others with a bare LF")
      }
      if end.content == position { return Head(start: line, fields: fields, length: end.next) }
      guard fields.count < limits.fieldCount else {
        throw HTTPSyntaxError("the \(kind) has over \(limits.fieldCount) header fields", fault: .fieldsTooLarge)
      }
      fields.append(try field(UnsafeRawBufferPointer(rebasing: bytes[position..<end.content])))
      position = end.next
    }
  }

  // MARK: - Lines

  package static let cr = UInt8(ascii: "\r")
  package static let lf = UInt8(ascii: "\n")
  package static let space = UInt8(ascii: " ")
  package static let tab = UInt8(ascii: "\t")

  /// What the bytes from a line's start say of it.
  private enum LineScan {
    /// Where its content ends (before its CR LF, or a request's bare LF)
    /// and where the next line begins.
    case line(content: Int, next: Int)
    /// Not yet: the bytes end before the line or its room do.
    case needMore
    /// No LF within `limit` bytes of content and its CR LF.
    case tooLong
  }

  /// The next line from `from`, whose content may be `limit` bytes. Decided
  /// by the bytes within that room only, so that bytes cut into reads of
  /// any size are decided alike: a line too long is too long whatever
  /// follows it (a fuzzer found a malformed line past the room refused
  /// as malformed when the bytes came at once, as too large when cut). A
  /// CR anywhere but before the LF is refused.
  private static func scanLine(_ bytes: UnsafeRawBufferPointer, from: Int, limit: Int, _ kind: Kind)
    throws(HTTPSyntaxError) -> LineScan
  {
    var i = from
    let room = from + max(limit, 0) + 2
    let end = min(bytes.count, room)
    while i < end {
      let byte = bytes[i]
      if byte == lf {
        guard kind.takesBareLF else { throw HTTPSyntaxError("a line ends with a bare LF") }
        return .line(content: i, next: i + 1)
      }
      if byte == cr {
        guard i + 1 < bytes.count else { return .needMore }
        guard bytes[i + 1] == lf else { throw HTTPSyntaxError("a line has a CR that does not end it") }
        return .line(content: i, next: i + 2)
      }
      i += 1
    }
    return end == room ? .tooLong : .needMore
  }

  // MARK: - Start lines

  /// `METHOD SP TARGET SP HTTP/d.d`, of which only 1.1 and 1.0 are served.
  private static func requestLine(_ line: UnsafeRawBufferPointer) throws(HTTPSyntaxError) -> RequestLine {
    let parts = line.split(separator: space, maxSplits: 3, omittingEmptySubsequences: false)
    guard parts.count == 3 else {
      throw HTTPSyntaxError("the request line must be METHOD TARGET HTTP/1.1, with one space between each")
    }
    let (method, target, version) = (parts[0], parts[1], parts[2])
    guard !method.isEmpty, method.allSatisfy(isTokenByte) else {
      throw HTTPSyntaxError("the request method is not a token")
    }
    guard !target.isEmpty, target.allSatisfy({ $0 > 0x20 && $0 < 0x7F }) else {
      throw HTTPSyntaxError("the request target has a character that must be %-encoded")
    }
    guard version.count == 8, version.starts(with: "HTTP/".utf8) else {
      throw HTTPSyntaxError("the request line does not end with an HTTP version")
    }
    let (major, dot, minor) = (
      version[version.startIndex + 5], version[version.startIndex + 6], version[version.startIndex + 7]
    )
    guard isDigit(major), dot == UInt8(ascii: "."), isDigit(minor) else {
      throw HTTPSyntaxError("the request line does not end with an HTTP version")
    }
    guard major == UInt8(ascii: "1"), minor <= UInt8(ascii: "1") else {
      throw HTTPSyntaxError("only HTTP/1.1 and HTTP/1.0 are served", fault: .versionNotServed)
    }
    return RequestLine(method: text(method), target: text(target), version: text(version))
  }

  /// `HTTP/1.1 200 OK`: version, a three-digit code, an optional reason
  /// (a missing reason is tolerated with or without its space: nothing
  /// about where the answer ends depends on it).
  private static func statusLine(_ line: UnsafeRawBufferPointer) throws(HTTPSyntaxError) -> StatusLine {
    guard !line.isEmpty else { throw HTTPSyntaxError("the answer has no status line") }
    let text = Array(line)
    guard text.count >= 12, text[8] == space,
      let version = String(validating: text[0..<8], as: UTF8.self), version == "HTTP/1.1" || version == "HTTP/1.0"
    else {
      throw HTTPSyntaxError(
        text.starts(with: Array("HTTP/".utf8))
          ? "the status line is not HTTP/1.1 or HTTP/1.0 followed by a status code"
          : "the answer does not begin with an HTTP/1 status line")
    }
    let digits = text[9..<12]
    guard digits.allSatisfy(isDigit), (0x31...0x35).contains(digits.first!) else {
      throw HTTPSyntaxError("the status code is not three digits from 100 to 599")
    }
    let status = digits.reduce(0) { $0 * 10 + Int($1 - 0x30) }
    var reason = text[12...]
    if let byte = reason.first {
      guard byte == space else { throw HTTPSyntaxError("the status code is not three digits from 100 to 599") }
      reason.removeFirst()
    }
    guard reason.allSatisfy(isValueByte) else { throw HTTPSyntaxError("the status line has a control character") }
    return StatusLine(version: version, status: status, reason: String(decoding: reason, as: UTF8.self))
  }

  // MARK: - Fields

  /// `name ":" OWS value OWS`, the value without its surrounding spaces; a
  /// line that starts with a space or a tab continues the one before
  /// (obs-fold), which is refused. Also a trailer's lines.
  package static func field(_ line: UnsafeRawBufferPointer) throws(HTTPSyntaxError) -> (String, String) {
    guard let first = line.first else { throw HTTPSyntaxError("a header line has no colon") }
    if first == space || first == tab {
      throw HTTPSyntaxError(
        "a header line is folded onto the one before it (obs-fold): where the message ends is unclear")
    }
    guard let colon = line.firstIndex(of: UInt8(ascii: ":")) else {
      throw HTTPSyntaxError("a header line has no colon")
    }
    let name = line[..<colon]
    guard !name.isEmpty else { throw HTTPSyntaxError("a header line has an empty name") }
    guard name.allSatisfy(isTokenByte) else {
      throw HTTPSyntaxError(
        name.last == space || name.last == tab
          ? "a header name is followed by whitespace before its colon"
          : "a header name has a character a name cannot have")
    }
    var from = colon + 1
    var to = line.count
    while from < to, line[from] == space || line[from] == tab { from += 1 }
    while to > from, line[to - 1] == space || line[to - 1] == tab { to -= 1 }
    let value = line[from..<to]
    guard value.allSatisfy(isValueByte) else {
      throw HTTPSyntaxError("the header \(text(name)) has a control character")
    }
    return (text(name), text(value))
  }

  // MARK: - Characters

  /// tchar (RFC 9110 §5.6.2).
  package static func isTokenByte(_ byte: UInt8) -> Bool {
    switch byte {
    case 0x30...0x39, 0x41...0x5A, 0x61...0x7A: return true
    // ! # $ % & ' * + - . ^ _ ` | ~
    case 0x21, 0x23...0x27, 0x2A, 0x2B, 0x2D, 0x2E, 0x5E...0x60, 0x7C, 0x7E: return true
    default: return false
    }
  }

  /// field-vchar, SP and HTAB (RFC 9110 §5.5): obs-text passes, controls do not.
  package static func isValueByte(_ byte: UInt8) -> Bool {
    byte == tab || byte == space || (0x21...0x7E).contains(byte) || byte >= 0x80
  }

  package static func isDigit(_ byte: UInt8) -> Bool { byte >= 0x30 && byte <= 0x39 }

  /// Bytes as text; invalid UTF-8 (obs-text) is replaced rather than
  /// trusted, and then matches nothing.
  private static func text(_ bytes: Slice<UnsafeRawBufferPointer>) -> String {
    String(decoding: UnsafeRawBufferPointer(rebasing: bytes), as: UTF8.self)
  }
}
