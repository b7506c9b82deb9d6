import MsglogCore
import MsglogHTTPWire

/// The head of an HTTP/1.1 request (RFC 9112 2–5): its grammar read by the
/// wire's `HTTPHeadParser` (the client's answers go through the same one),
/// then what its fields decide for this server.
///
/// Where a request ends is never guessed (a proxy in front and this server
/// must agree on it, or one request becomes two): a folded line (obs-fold),
/// an empty or non-numeric `Content-Length`, a transfer coding other than
/// exactly `chunked`, both framings at once, or a second field of those
/// that decide framing, authority or access is refused with a 400 whose
/// answer closes the connection. Too long a line or head is a 414 or 431 of
/// the server's own, also closing.
extension RequestHead {
  package static let limits = HTTPHeadParser.Limits(startLine: 8192, fields: 16384, fieldCount: 100)

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
    let parsed: HTTPHeadParser.Head<HTTPHeadParser.RequestLine>?
    do {
      parsed = try HTTPHeadParser.request(bytes, limits: limits)
    } catch {
      throw HTTPError(error)
    }
    guard let parsed else { return .incomplete }
    let line = parsed.start
    var target = line.target
    var headers = parsed.fields
    if !target.hasPrefix("/") && target.contains("://") {
      (target, headers) = try originForm(target, headers)
    }
    var head = RequestHead(
      method: line.method, target: target, version: line.version, headers: headers, framing: .none,
      keepAlive: line.version == "HTTP/1.1", expectsContinue: false)
    try checkFields(&head)
    return .head(head, length: parsed.length)
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
      // Exactly `chunked` (SPEC), as every client writes it: `CHUNKED` read
      // as chunked where a proxy in front reads it otherwise is a smuggling.
      guard coding == "chunked" else { throw .badFraming("only Transfer-Encoding: chunked is understood") }
      guard head.version == "HTTP/1.1" else { throw .badFraming("Transfer-Encoding needs HTTP/1.1") }
      head.framing = .chunked
    } else if let length {
      guard !length.isEmpty, length.utf8.allSatisfy(HTTPHeadParser.isDigit) else {
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
}

extension Substring {
  fileprivate func trimmingCharacters(in set: String) -> Substring {
    var text = self
    while let first = text.first, set.contains(first) { text.removeFirst() }
    while let last = text.last, set.contains(last) { text.removeLast() }
    return text
  }
}

extension HTTPError {
  /// A request the wire's grammar refuses, by its fault: malformed 400, too
  /// long a request line 414, too large a header section 431, a body over
  /// its bound 413, a version other than 1.x 505; each closes the
  /// connection, since where the next request would begin is unknown.
  init(_ error: HTTPSyntaxError) {
    let status: UInt32
    switch error.fault {
    case .malformed: status = 400
    case .startLineTooLong: status = 414
    case .fieldsTooLarge: status = 431
    case .bodyTooLarge: status = 413
    case .versionNotServed: status = 505
    }
    self.init(status: status, message: error.reason, headers: [("Connection", "close")])
  }
}
