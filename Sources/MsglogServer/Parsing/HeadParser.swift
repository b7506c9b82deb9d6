import MsglogCore

/// The head of an HTTP/1.1 request (RFC 9112 2–5), parsed strictly from
/// bytes: its request line and header fields up to the empty line.
///
/// Where a request ends is never guessed (a proxy in front and this server
/// must agree on it, or one request becomes two): a folded line (obs-fold),
/// an empty or non-numeric `Content-Length`, a transfer coding other than
/// exactly `chunked`, both framings at once, or a second field of those
/// that decide framing, authority or access is refused with a 400 whose
/// answer closes the connection. Too long a line or head is a 414 or 431 of
/// the server's own, also closing.
package enum HeadParser {
  package static let requestLineLimit = 8192
  package static let headLimit = 16384
  package static let fieldLimit = 100

  /// Fields of which one request may carry only one: a second `Host`,
  /// `Content-Length` or `Transfer-Encoding` makes the framing or authority a
  /// guess; a second `Authorization`, `Origin`, `Content-Type` or
  /// `Sec-Fetch-Site` lets whichever copy a check reads win.
  package static let singletons: Set<String> = [
    "host", "content-length", "transfer-encoding", "authorization", "origin", "content-type", "sec-fetch-site",
  ]

  package enum Outcome {
    /// Not all of the head has arrived.
    case incomplete
    /// The head, and how many bytes it took (the body starts after them).
    case head(RequestHead, length: Int)
    /// The answer, which closes the connection.
    case refused(HTTPError)
  }

  package static func parse(_ bytes: UnsafeRawBufferPointer) -> Outcome {
    do throws(HTTPError) {
      return try parseHead(bytes)
    } catch {
      var error = error
      if !error.headers.contains(where: { $0.0 == "Connection" }) { error.headers.append(("Connection", "close")) }
      return .refused(error)
    }
  }

  private static func parseHead(_ bytes: UnsafeRawBufferPointer) throws(HTTPError) -> Outcome {
    var start = 0
    // Empty lines before a request are allowed (RFC 9112 2.2); a few.
    while start < bytes.count, bytes[start] == cr || bytes[start] == lf {
      start += 1
      if start > 64 { throw .badFraming("the request starts with too many empty lines") }
    }
    guard let requestEnd = try lineEnd(bytes, from: start, limit: requestLineLimit) else {
      if bytes.count - start > requestLineLimit {
        throw HTTPError(status: 414, message: "the request line is over \(requestLineLimit) bytes")
      }
      return .incomplete
    }
    let (method, requestTarget, version) = try requestLine(bytes, start, requestEnd.content)
    var target = requestTarget
    var headers: [(String, String)] = []
    var position = requestEnd.next
    let headStart = position
    while true {
      guard let end = try lineEnd(bytes, from: position, limit: headLimit - (position - headStart)) else {
        if bytes.count - headStart > headLimit {
          throw HTTPError(status: 431, message: "the request's header fields are over \(headLimit) bytes")
        }
        return .incomplete
      }
      if end.content == position {
        position = end.next
        break
      }
      guard headers.count < fieldLimit else {
        throw HTTPError(status: 431, message: "the request has over \(fieldLimit) header fields")
      }
      headers.append(try field(bytes, position, end.content))
      position = end.next
    }
    if !target.hasPrefix("/") && target.contains("://") {
      (target, headers) = try originForm(target, headers)
    }
    var head = RequestHead(
      method: method, target: target, version: version, headers: headers, framing: .none,
      keepAlive: version == "HTTP/1.1", expectsContinue: false)
    try checkFields(&head)
    return .head(head, length: position)
  }

  // MARK: - Lines

  private static let cr = UInt8(ascii: "\r")
  private static let lf = UInt8(ascii: "\n")

  /// The next line from `from`: where its content ends (before CR LF, or a
  /// bare LF, RFC 9112 2.2) and where the next begins; nil when no LF comes
  /// within `limit` bytes. A CR anywhere but before the LF is refused.
  private static func lineEnd(_ bytes: UnsafeRawBufferPointer, from: Int, limit: Int) throws(HTTPError) -> (
    content: Int, next: Int
  )? {
    var i = from
    let end = min(bytes.count, from + max(limit, 0) + 2)
    while i < end {
      let byte = bytes[i]
      if byte == lf { return (i, i + 1) }
      if byte == cr {
        guard i + 1 < bytes.count else { return nil }
        guard bytes[i + 1] == lf else { throw .badFraming("the request has a CR that does not end a line") }
        return (i, i + 2)
      }
      i += 1
    }
    return nil
  }

  /// `METHOD SP TARGET SP HTTP/d.d`.
  private static func requestLine(_ bytes: UnsafeRawBufferPointer, _ start: Int, _ end: Int) throws(HTTPError) -> (
    String, String, String
  ) {
    let line = UnsafeRawBufferPointer(rebasing: bytes[start..<end])
    let parts = line.split(separator: 0x20, omittingEmptySubsequences: false)
    guard parts.count == 3 else {
      throw .badFraming("the request line must be METHOD TARGET HTTP/1.1, with one space between each")
    }
    let (method, target, version) = (parts[0], parts[1], parts[2])
    guard !method.isEmpty, method.allSatisfy(isToken) else { throw .badFraming("the request method is not a token") }
    guard !target.isEmpty, target.allSatisfy({ $0 > 0x20 && $0 < 0x7F }) else {
      throw .badFraming("the request target has a character that must be %-encoded")
    }
    let v = Array(version)
    guard v.count == 8, v[0..<5].elementsEqual("HTTP/".utf8), isDigit(v[5]), v[6] == UInt8(ascii: "."), isDigit(v[7])
    else {
      throw .badFraming("the request line does not end with an HTTP version")
    }
    guard v[5] == UInt8(ascii: "1"), v[7] <= UInt8(ascii: "1") else {
      throw HTTPError(status: 505, message: "only HTTP/1.1 and HTTP/1.0 are served")
    }
    return (text(method), text(target), text(version))
  }

  /// `name ":" OWS value OWS`; a line that starts with a space or a tab
  /// continues the previous one (obs-fold), which is refused.
  private static func field(_ bytes: UnsafeRawBufferPointer, _ start: Int, _ end: Int) throws(HTTPError) -> (
    String, String
  ) {
    let first = bytes[start]
    if first == 0x20 || first == 0x09 {
      throw .badFraming("a header line continues the one before it (obs-fold): where the request ends is unclear")
    }
    guard let colon = bytes[start..<end].firstIndex(of: UInt8(ascii: ":")) else {
      throw .badFraming("a header line has no colon")
    }
    let name = bytes[start..<colon]
    guard !name.isEmpty, name.allSatisfy(isToken) else {
      throw .badFraming("a header name is not a token (no space before the colon)")
    }
    var from = colon + 1
    var to = end
    while from < to, bytes[from] == 0x20 || bytes[from] == 0x09 { from += 1 }
    while to > from, bytes[to - 1] == 0x20 || bytes[to - 1] == 0x09 { to -= 1 }
    let value = bytes[from..<to]
    guard value.allSatisfy({ $0 >= 0x20 && $0 != 0x7F || $0 == 0x09 }) else {
      throw .badFraming("the header \(text(name)) has a control character")
    }
    return (text(name), text(value))
  }

  // MARK: - What the fields decide

  private static func checkFields(_ head: inout RequestHead) throws(HTTPError) {
    var seen: Set<String> = []
    var length: String? = nil
    var coding: String? = nil
    for (name, value) in head.headers {
      let lower = name.lowercased()
      if singletons.contains(lower) {
        guard seen.insert(lower).inserted else { throw .badFraming("the request has more than one \(name) header") }
      }
      switch lower {
      case "content-length": length = value
      case "transfer-encoding": coding = value
      case "connection":
        for option in value.lowercased().split(separator: ",") {
          let option = option.trimmingCharacters(in: " \t")
          if option == "close" { head.keepAlive = false }
          if option == "keep-alive" && head.version == "HTTP/1.0" { head.keepAlive = true }
        }
      case "expect":
        guard value.lowercased() == "100-continue" else {
          throw HTTPError(status: 417, message: "only Expect: 100-continue is understood")
        }
        head.expectsContinue = true
      default: break
      }
    }
    if let coding {
      guard length == nil else {
        throw .badFraming("the request has both Content-Length and Transfer-Encoding: which one frames it is ambiguous")
      }
      guard coding.lowercased() == "chunked" else { throw .badFraming("only Transfer-Encoding: chunked is understood") }
      guard head.version == "HTTP/1.1" else { throw .badFraming("Transfer-Encoding needs HTTP/1.1") }
      head.framing = .chunked
    } else if let length {
      guard !length.isEmpty, length.utf8.allSatisfy(isDigit) else {
        throw .badFraming("the Content-Length \(TerminalText.quoted(length)) is not a number")
      }
      // Past 18 digits it is over any limit anyway.
      head.framing = .length(length.utf8.count > 18 ? Int.max : Int(length)!)
    }
  }

  /// `GET http://localhost:8080/api/streams`: the target's authority is the
  /// request's `Host` (RFC 9112 3.2.2: a `Host` field sent too is ignored),
  /// and its path and query the target.
  private static func originForm(_ target: String, _ headers: [(String, String)]) throws(HTTPError) -> (
    String, [(String, String)]
  ) {
    let lower = target.lowercased()
    guard lower.hasPrefix("http://") else {
      throw .badFraming("an absolute request target must be an http:// URL")
    }
    let rest = target.dropFirst("http://".count)
    let slash = rest.firstIndex(where: { $0 == "/" || $0 == "?" }) ?? rest.endIndex
    let authority = String(rest[..<slash])
    guard !authority.isEmpty, !authority.contains("@") else {
      throw .badFraming("the request target's authority is malformed")
    }
    var path = String(rest[slash...])
    if path.isEmpty || path.first == "?" { path = "/" + path }
    let others = headers.filter { $0.0.lowercased() != "host" }
    return (path, [("Host", authority)] + others)
  }

  // MARK: - Characters

  private static let tokenPunctuation: Set<UInt8> = Set("!#$%&'*+-.^_`|~".utf8)

  static func isToken(_ byte: UInt8) -> Bool {
    isDigit(byte) || (byte | 0x20 >= UInt8(ascii: "a") && byte | 0x20 <= UInt8(ascii: "z"))
      || tokenPunctuation.contains(byte)
  }

  static func isDigit(_ byte: UInt8) -> Bool { byte >= 0x30 && byte <= 0x39 }

  /// Bytes as text; invalid UTF-8 (obs-text) is replaced rather than
  /// trusted, and then matches nothing.
  private static func text(_ bytes: some Sequence<UInt8>) -> String { String(decoding: Array(bytes), as: UTF8.self) }
}

extension Substring {
  fileprivate func trimmingCharacters(in set: String) -> Substring {
    var text = self
    while let first = text.first, set.contains(first) { text.removeFirst() }
    while let last = text.last, set.contains(last) { text.removeLast() }
    return text
  }
}
