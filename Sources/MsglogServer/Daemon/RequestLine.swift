/// The first line of a request, checked before libmicrohttpd sees it:
/// `METHOD SP TARGET SP HTTP/d.d`. libmicrohttpd closes the connection
/// without a word on some malformed lines (one without a space); this lets
/// every malformed one get a 400 that says why.
enum RequestLine {
  enum Verdict: Equatable {
    /// The line is whole and well formed.
    case valid
    case invalid(String)
    /// The line has not all arrived yet.
    case incomplete
  }

  /// The verdict on what has arrived so far.
  static func check(_ bytes: UnsafeRawBufferPointer) -> Verdict {
    var start = 0
    // Empty lines before a request are allowed (RFC 9112 2.2).
    while start < bytes.count, bytes[start] == 0x0D || bytes[start] == 0x0A { start += 1 }
    guard let newline = bytes[start...].firstIndex(of: 0x0A) else { return .incomplete }
    var end = newline
    if end > start, bytes[end - 1] == 0x0D { end -= 1 }
    let line = Array(bytes[start..<end])
    let parts = line.split(separator: 0x20, omittingEmptySubsequences: false)
    guard parts.count == 3 else {
      return .invalid("the request line must be METHOD TARGET HTTP/1.1, with one space between each")
    }
    let method = parts[0]
    let target = parts[1]
    let version = parts[2]
    let token = Set("!#$%&'*+-.^_`|~".utf8)
    guard !method.isEmpty, method.allSatisfy({ isAlphanumeric($0) || token.contains($0) }) else {
      return .invalid("the request method is not a token")
    }
    guard !target.isEmpty, target.allSatisfy({ $0 > 0x20 && $0 < 0x7F }) else {
      return .invalid("the request target has a character that must be %-encoded")
    }
    let v = Array(version)
    guard v.count == 8, v[0..<5].elementsEqual("HTTP/".utf8), isDigit(v[5]), v[6] == UInt8(ascii: "."), isDigit(v[7])
    else {
      return .invalid("the request line does not end with an HTTP version")
    }
    return .valid
  }

  private static func isDigit(_ byte: UInt8) -> Bool { byte >= 0x30 && byte <= 0x39 }

  private static func isAlphanumeric(_ byte: UInt8) -> Bool {
    isDigit(byte) || (byte | 0x20 >= UInt8(ascii: "a") && byte | 0x20 <= UInt8(ascii: "z"))
  }
}
