import MsglogHTTPWire

/// Where an answer's body ends (RFC 9112 §6.3), decided from its head and
/// the request's method, and never guessed: two different lengths, a
/// length beside `Transfer-Encoding`, or a coding other than `chunked`
/// (the client asks for none) is a malformed answer, since a reader that
/// picked one reading could split the stream where the server did not.
package enum BodyFraming: Equatable {
  /// No body (a `HEAD`, 1xx, 204, 304).
  case none
  case length(Int)
  case chunked
  /// Up to the end of the connection (HTTP/1.0 style): the connection is
  /// not kept.
  case untilClose

  package static func of(_ head: HTTPResponseHead, method: String) throws(HTTPSyntaxError) -> BodyFraming {
    if method == "HEAD" || head.status < 200 || head.status == 204 || head.status == 304 { return .none }
    let codings = head.elements(of: "transfer-encoding")
    let lengths = head.elements(of: "content-length")
    if !head.values(of: "transfer-encoding").isEmpty {
      guard lengths.isEmpty else {
        throw HTTPSyntaxError("the answer has both Content-Length and Transfer-Encoding")
      }
      guard codings == ["chunked"] else {
        throw HTTPSyntaxError("the answer has a transfer coding other than chunked")
      }
      return .chunked
    }
    if !head.values(of: "content-length").isEmpty {
      guard let first = lengths.first else { throw HTTPSyntaxError("the answer's Content-Length is not a number") }
      guard lengths.allSatisfy({ $0 == first }) else {
        throw HTTPSyntaxError("the answer has different Content-Length values")
      }
      guard first.utf8.count <= 18, first.utf8.allSatisfy({ (0x30...0x39).contains($0) }), let length = Int(first)
      else { throw HTTPSyntaxError("the answer's Content-Length is not a number") }
      return .length(length)
    }
    return .untilClose
  }
}
