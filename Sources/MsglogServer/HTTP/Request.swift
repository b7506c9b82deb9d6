import Msglog

/// One request as the routes see it: plain values, decoded and checked
/// before routing, so that the routes run the same in process (tests) as
/// behind the HTTP engine.
package struct Request: Sendable {
  package var method: String
  /// The path, percent-decoded: valid UTF-8, with no encoded `/` and no NUL.
  package var path: String
  /// The query's parameters, decoded as the path is; each name at most once.
  package var query: [String: String]
  /// Header fields as received, names in lowercase, in their order.
  package var headers: [(name: String, value: String)]
  package var body: [UInt8]
  /// `HTTP/1.1`, `HTTP/1.0`.
  package var version: String
  /// The scheme the client used at a `--trusted-proxy` (its
  /// `X-Forwarded-Proto`), set by the connection; nil when the request came
  /// straight, or the proxy did not say.
  package var forwardedScheme: String? = nil
  /// Who is asking: set by the router once the token is checked.
  package var caller: Caller = .open
  /// The client's address as the request log writes it (a trusted proxy's
  /// word on it first); nil in process. Failed tokens are counted by it.
  package var client: String? = nil

  /// A request from its parts; `target` is the request line's target as
  /// sent (`/api/items?stream=main`), decoded here.
  package init(
    method: String, target: String, version: String = "HTTP/1.1", headers: [(String, String)] = [],
    body: [UInt8] = []
  ) throws(HTTPError) {
    self.method = method
    self.version = version
    self.headers = headers.map { (name: $0.0.lowercased(), value: $0.1) }
    self.body = body
    let question = target.utf8.firstIndex(of: UInt8(ascii: "?"))
    let rawPath = question.map { target.utf8[..<$0] } ?? target.utf8[...]
    guard rawPath.first == UInt8(ascii: "/") else { throw .badRequest("the request target must start with /") }
    path = try PercentDecoding.decode(Array(rawPath), what: "the path", allowSlash: false)
    query = [:]
    if let question {
      let rawQuery = target.utf8[target.utf8.index(after: question)...]
      for pair in rawQuery.split(separator: UInt8(ascii: "&"), omittingEmptySubsequences: true) {
        let equals = pair.firstIndex(of: UInt8(ascii: "="))
        let rawName = Array(equals.map { pair[..<$0] } ?? pair[...])
        let rawValue = equals.map { Array(pair[pair.index(after: $0)...]) } ?? []
        let name = try PercentDecoding.decode(rawName, what: "a parameter name", allowSlash: true, plusIsSpace: true)
        let value = try PercentDecoding.decode(
          rawValue, what: "the parameter \(name)", allowSlash: true, plusIsSpace: true)
        // Two values for one name: which one counts would be a guess.
        guard query.updateValue(value, forKey: name) == nil else {
          throw .badRequest("the parameter \(name) is given more than once")
        }
      }
    }
  }

  /// The value of the header `name` (lowercase); nil when absent.
  package func header(_ name: String) -> String? {
    headers.first { $0.name == name }?.value
  }

  /// Every value of the header `name` (lowercase).
  package func headers(named name: String) -> [String] {
    headers.filter { $0.name == name }.map(\.value)
  }
}

/// `%XX` escapes, decoded strictly: a bad escape, an encoded NUL, an
/// encoded `/` in the path (which would make `/api%2fitems` the route
/// `/api/items` behind a proxy that saw one segment), a control character
/// or invalid UTF-8 is a 400, never guessed at.
enum PercentDecoding {
  static func decode(
    _ raw: [UInt8], what: String, allowSlash: Bool, plusIsSpace: Bool = false
  ) throws(HTTPError) -> String {
    var bytes: [UInt8] = []
    bytes.reserveCapacity(raw.count)
    var i = 0
    while i < raw.count {
      var byte = raw[i]
      if byte == UInt8(ascii: "%") {
        guard i + 2 < raw.count, let high = Hex.value(of: raw[i + 1]), let low = Hex.value(of: raw[i + 2]) else {
          throw .badRequest("\(what) has a malformed %-escape")
        }
        byte = high << 4 | low
        if byte == UInt8(ascii: "/") && !allowSlash { throw .badRequest("\(what) has an encoded /") }
        i += 3
      } else {
        if byte == UInt8(ascii: "+") && plusIsSpace { byte = UInt8(ascii: " ") }
        i += 1
      }
      if byte == 0 { throw .badRequest("\(what) has a NUL byte") }
      if byte < 0x20 || byte == 0x7F { throw .badRequest("\(what) has a control character") }
      bytes.append(byte)
    }
    guard let text = String(validating: bytes, as: UTF8.self) else {
      throw .badRequest("\(what) is not valid UTF-8")
    }
    return text
  }
}
