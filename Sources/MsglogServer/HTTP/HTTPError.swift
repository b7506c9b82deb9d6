import MsglogCore

/// A request refused: the status and the words of `{"error":"…"}`, and any
/// header the refusal needs (`Allow` on a 405, `WWW-Authenticate` on a 401,
/// `Connection: close` when the request's framing cannot be trusted).
package struct HTTPError: Error, Equatable, Sendable {
  package var status: UInt32
  package var message: String
  package var headers: [(String, String)] = []

  package init(status: UInt32, message: String, headers: [(String, String)] = []) {
    self.status = status
    self.message = message
    self.headers = headers
  }

  /// A malformed request (400).
  package static func badRequest(_ message: String) -> HTTPError { HTTPError(status: 400, message: message) }

  /// A refusal in the browser's world (403): a foreign Host, Origin or content type.
  package static func forbidden(_ message: String) -> HTTPError { HTTPError(status: 403, message: message) }

  /// Framing that cannot be trusted (400): answered, then the connection is
  /// closed, since where this request ends and the next begins is unknown.
  package static func badFraming(_ message: String) -> HTTPError {
    HTTPError(status: 400, message: message, headers: [("Connection", "close")])
  }

  package static func == (a: HTTPError, b: HTTPError) -> Bool {
    a.status == b.status && a.message == b.message && a.headers.elementsEqual(b.headers, by: ==)
  }
}

extension HTTPError {
  /// The library's error categories as statuses, in this one place: usage
  /// 400, unknown stream or item 404, refused 409, expected-version
  /// mismatch 412; what the store refuses this user 403, a database msglog
  /// cannot use 409; a damaged database 500, an unreachable one 503. The
  /// message is the library's own, as the command line prints it.
  package init(_ error: MsglogError) {
    let status: UInt32
    switch error.category {
    case .invalidInput: status = 400
    case .conflict: status = 412
    case .notFound: status = 404
    case .refused: status = 409
    case .forbidden: status = 403
    case .incompatible: status = 409
    case .damaged: status = 500
    case .unavailable: status = 503
    }
    self.init(status: status, message: error.description)
  }
}
