/// How the body after a request's head is framed (RFC 9112 6.3): decided by
/// the head alone, never guessed.
package enum BodyFraming: Equatable, Sendable {
  case none
  /// `Content-Length`: exactly this many bytes.
  case length(Int)
  /// `Transfer-Encoding: chunked`, and nothing else.
  case chunked
}

/// A request's line and header fields, parsed and checked: what the server
/// decides from before it reads a byte of the body.
package struct RequestHead: Sendable {
  package var method: String
  /// The target as sent (origin-form `/path?query`; absolute-form is
  /// rewritten to origin-form by `RequestHead.parse`, its authority becoming `Host`).
  package var target: String
  /// `HTTP/1.1` or `HTTP/1.0`.
  package var version: String
  /// The fields as sent, in their order (names as written).
  package var headers: [(String, String)]
  package var framing: BodyFraming
  /// Whether the connection may carry another request after this one.
  package var keepAlive: Bool
  /// `Expect: 100-continue`: the client waits for a go-ahead before its body.
  package var expectsContinue: Bool

  /// The value of the field `name` (lowercase); nil when absent.
  package func header(_ name: String) -> String? {
    headers.first { $0.0.lowercased() == name }?.1
  }
}
