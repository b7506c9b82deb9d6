import MsglogCore

/// A request refused: the status and the words of `{"error":"…"}`, and any
/// header the refusal needs (`Allow` on a 405, `WWW-Authenticate` on a 401,
/// `Connection: close` when the request's framing cannot be trusted).
package struct HTTPError: Error, Equatable, Sendable {
  package var status: UInt32
  package var message: String
  package var headers: [(String, String)] = []
  /// Why a token was refused (`TokenGate.Refusal`), for the request log
  /// and the metrics; never sent.
  package var reason: String? = nil
  /// The named token refused (403), for the request log; never sent.
  package var token: String? = nil

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
  /// message is the library's own, as the command line prints it, without
  /// the database's location (`answered(_:)`).
  package init(_ error: MsglogError) {
    let status: UInt32
    switch error.category {
    case .invalidInput: status = 400
    case .conflict: status = 412
    case .notFound: status = 404
    case .refused: status = 409
    case .gone: status = 410
    case .forbidden: status = 403
    case .incompatible: status = 409
    case .damaged: status = 500
    case .unavailable: status = 503
    }
    self.init(status: status, message: Self.answered(error))
  }

  /// An error's words for an API client: where the log lives — its path,
  /// its PostgreSQL server, role and database — is the operator's to know
  /// (their log line names it), not every client's, so it is said as "the
  /// log"; a failed connection's reason, which names the server, is left out.
  static func answered(_ error: MsglogError) -> String {
    if case .cannotConnect = error { return "cannot connect to the log's database now; retry shortly" }
    guard let location = location(of: error) else { return error.description }
    // Its first mention: every description names the location before any reason.
    return error.description.replacing(location, with: "the log", maxReplacements: 1)
  }

  /// The location a store's error names, if it names one.
  private static func location(of error: MsglogError) -> String? {
    switch error {
    case .noDatabase(let location, _, _), .notAMsglogDatabase(let location, _), .anotherProgramsDatabase(let location),
      .readOnly(let location, _, _), .permissionDenied(let location, _, _, _), .cannotRead(let location, _),
      .cannotCreate(let location, _), .cannotBackUp(let location, _), .backupNotSupported(let location),
      .changedDuringRead(let location), .connectionLost(let location, _), .readCancelled(let location, _),
      .newerFormat(let location, _, _),
      .notAReplica(let location), .syncRunning(let location), .cannotClone(let location, _):
      return location
    default: return nil
    }
  }
}
