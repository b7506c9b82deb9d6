/// A message that breaks RFC 9112's syntax, with what is wrong, for the
/// layer that knows whom to blame (`HTTPClientError.malformedAnswer`).
public struct HTTPSyntaxError: Error, Equatable, Sendable {
  public let reason: String

  package init(_ reason: String) { self.reason = reason }
}

/// Reads a message's head (RFC 9112 §2–5) strictly: lines end in CRLF (a
/// bare CR or LF is refused, as smuggling lives in such differences), field
/// names are tokens with no space before the colon, no line folding, no
/// control character in a value. Nothing is repaired or guessed.
package enum HTTPHeadParser {
  /// Where the head at the start of `bytes` ends (just after its empty
  /// line), or nil when it has not all arrived. Throws at the first bare LF
  /// and when the head is longer than `limit` bytes.
  package static func end(of bytes: ArraySlice<UInt8>, limit: Int) throws(HTTPSyntaxError) -> Int? {
    var lineStart = bytes.startIndex
    var index = bytes.startIndex
    while index < bytes.endIndex {
      if bytes[index] == lf {
        guard index > lineStart, bytes[index - 1] == cr else { throw HTTPSyntaxError("a line ends with a bare LF") }
        if index - 1 == lineStart { return index + 1 }
        lineStart = index + 1
      }
      index += 1
      if index - bytes.startIndex > limit { throw HTTPSyntaxError("the head is longer than \(limit) bytes") }
    }
    return nil
  }

  /// The head of an answer: `head` is everything `end(of:limit:)` found,
  /// its empty line included.
  package static func response(_ head: ArraySlice<UInt8>) throws(HTTPSyntaxError) -> HTTPResponseHead {
    let lines = try self.lines(head)
    guard let statusLine = lines.first else { throw HTTPSyntaxError("the answer has no status line") }
    let (version, status, reason) = try parseStatusLine(statusLine)
    return HTTPResponseHead(version: version, status: status, reason: reason, headers: try fields(lines.dropFirst()))
  }

  /// The lines of a head or a trailer section without their CRLFs (and
  /// without the final empty line); a CR anywhere but before LF is refused.
  package static func lines(_ head: ArraySlice<UInt8>) throws(HTTPSyntaxError) -> [ArraySlice<UInt8>] {
    var lines: [ArraySlice<UInt8>] = []
    var lineStart = head.startIndex
    var index = head.startIndex
    while index < head.endIndex {
      switch head[index] {
      case lf:
        guard index > lineStart, head[index - 1] == cr else { throw HTTPSyntaxError("a line ends with a bare LF") }
        let line = head[lineStart..<(index - 1)]
        if line.isEmpty { return lines }
        lines.append(line)
        lineStart = index + 1
      case cr:
        guard index + 1 < head.endIndex, head[index + 1] == lf else {
          throw HTTPSyntaxError("a line has a CR that does not end it")
        }
      default: break
      }
      index += 1
    }
    throw HTTPSyntaxError("the head does not end with an empty line")
  }

  /// Field lines (`name: value`), the value without its surrounding spaces.
  package static func fields(_ lines: ArraySlice<ArraySlice<UInt8>>) throws(HTTPSyntaxError) -> [HTTPHeader] {
    var headers: [HTTPHeader] = []
    headers.reserveCapacity(lines.count)
    for line in lines {
      guard let first = line.first else { continue }
      if first == space || first == tab {
        throw HTTPSyntaxError("a header line is folded onto the one before (obsolete line folding)")
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
      var value = line[(colon + 1)...]
      while let byte = value.first, byte == space || byte == tab { value.removeFirst() }
      while let byte = value.last, byte == space || byte == tab { value.removeLast() }
      guard value.allSatisfy(isValueByte) else {
        throw HTTPSyntaxError("the header \(String(decoding: name, as: UTF8.self)) has a control character")
      }
      headers.append(HTTPHeader(String(decoding: name, as: UTF8.self), String(decoding: value, as: UTF8.self)))
    }
    return headers
  }

  /// `HTTP/1.1 200 OK`: version, a three-digit code, an optional reason
  /// (a missing reason is tolerated with or without its space: nothing
  /// about where the answer ends depends on it).
  private static func parseStatusLine(_ line: ArraySlice<UInt8>) throws(HTTPSyntaxError) -> (String, Int, String) {
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
    guard digits.allSatisfy({ (0x30...0x39).contains($0) }), (0x31...0x35).contains(digits.first!) else {
      throw HTTPSyntaxError("the status code is not three digits from 100 to 599")
    }
    let status = digits.reduce(0) { $0 * 10 + Int($1 - 0x30) }
    var reason = text[12...]
    if let byte = reason.first {
      guard byte == space else { throw HTTPSyntaxError("the status code is not three digits from 100 to 599") }
      reason.removeFirst()
    }
    guard reason.allSatisfy(isValueByte) else { throw HTTPSyntaxError("the status line has a control character") }
    return (version, status, String(decoding: reason, as: UTF8.self))
  }

  static let cr = UInt8(ascii: "\r")
  static let lf = UInt8(ascii: "\n")
  static let space = UInt8(ascii: " ")
  static let tab = UInt8(ascii: "\t")

  /// tchar (RFC 9110 §5.6.2).
  package static func isTokenByte(_ byte: UInt8) -> Bool {
    switch byte {
    case 0x30...0x39, 0x41...0x5A, 0x61...0x7A: return true
    default: return "!#$%&'*+-.^_`|~".utf8.contains(byte)
    }
  }

  /// field-vchar, SP and HTAB (RFC 9110 §5.5): obs-text passes, controls do not.
  package static func isValueByte(_ byte: UInt8) -> Bool {
    byte == tab || byte == space || (0x21...0x7E).contains(byte) || byte >= 0x80
  }
}
