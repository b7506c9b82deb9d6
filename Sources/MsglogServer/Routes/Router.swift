import Msglog

/// Dispatches a request to its route, after the checks every request
/// passes in this order: its `Host` (403), its route (404, 405 with
/// `Allow`), a write's `Content-Type`, `Origin` and `Sec-Fetch-Site` (403),
/// the token (401), what a named token may do (403, `TokenGate`). A
/// refusal reads nothing from the log but the token. CORS headers go only
/// to an origin `--allow-origin` names.
package struct Router: Sendable {
  package let routes: [Route]
  package let policy: RequestPolicy
  /// Named tokens, when the router serves a log (nil: the operator's
  /// token alone, as a router without a log has).
  package let gate: TokenGate?
  /// Every route's path, for the metrics' `route` label.
  let paths: Set<String>

  package init(routes: [Route], policy: RequestPolicy, gate: TokenGate? = nil) {
    self.routes = routes
    self.policy = policy
    self.gate = gate
    paths = Set(routes.map(\.path))
  }

  /// What the request gets.
  package enum Resolution {
    case route(Route, Caller)
    /// A CORS preflight from an allowed origin, for a path taking these methods.
    case preflight([String])
    case refused(HTTPError)
  }

  /// Decides from the request line and headers alone (the body is not
  /// needed, and is not read when the answer is a refusal).
  ///
  /// - Parameter lookingUp: whether the log may be read for the token (not
  ///   on an event loop: `TokenGate.caller`).
  package func resolve(_ request: Request, lookingUp: Bool = true) -> Resolution {
    do throws(HTTPError) {
      try policy.checkHost(request)
      let candidates = routes.filter { $0.path == request.path }
      guard !candidates.isEmpty else { throw HTTPError(status: 404, message: "no such route: \(request.path)") }
      let methods = candidates.flatMap(\.methods)
      if request.method == "OPTIONS", policy.allowedCrossOrigin(request) != nil {
        return .preflight(methods)
      }
      let method = request.method == "HEAD" ? "GET" : request.method
      guard let route = candidates.first(where: { $0.method.rawValue == method }) else {
        throw HTTPError(
          status: 405, message: "\(request.method) is not allowed on \(request.path)",
          headers: [("Allow", methods.joined(separator: ", "))])
      }
      if route.method == .post { try policy.checkWrite(request) }
      var caller = Caller.open
      if route.needsToken {
        if let gate {
          caller = try gate.caller(of: request, policy: policy, lookingUp: lookingUp)
        } else {
          try policy.checkToken(request)
          caller = policy.token == nil ? .open : .operatorToken
        }
      }
      do throws(HTTPError) {
        try TokenGate.authorize(route, request, caller, withBody: false)
      } catch {
        var error = error
        error.token = caller.logName
        throw error
      }
      if let unknown = request.query.keys.sorted().first(where: { !route.parameters.contains($0) }) {
        throw HTTPError.badRequest(
          "unknown parameter \(TerminalText.quoted(unknown)) for \(request.path)"
            + (route.parameters.isEmpty ? " (it takes none)" : " (it takes \(route.parameters.sorted().joined(separator: ", ")))"))
      }
      return .route(route, caller)
    } catch {
      return .refused(error)
    }
  }

  /// The answer to a whole request; `failed` is told of what a handler
  /// threw that is the server's or the store's (a status of 500 or more),
  /// for the operator's log.
  package func respond(to request: Request, failed: ((any Error, HTTPError) -> Void)? = nil) -> Response {
    var response: Response
    switch resolve(request) {
    case .refused(let error):
      response = .error(error)
    case .preflight(let methods):
      response = Response(status: 204, contentType: "text/plain", body: .bytes([]))
      response.headers += [
        ("Access-Control-Allow-Methods", methods.joined(separator: ", ")),
        ("Access-Control-Allow-Headers", "Authorization, Content-Type, Last-Event-ID"),
        ("Access-Control-Max-Age", "600"),
      ]
    case .route(let route, let caller):
      do {
        var request = request
        request.caller = caller
        try TokenGate.authorize(route, request, caller, withBody: true)
        response = try route.handler(request)
        if response.status < 400 { gate?.noteServed(caller) }
      } catch {
        var refusal = HTTPError(describing: error)
        if refusal.status >= 500 { failed?(error, refusal) }
        if case MsglogError.namedToken(let why)? = error as? MsglogError, why.isForbidden {
          refusal.reason = TokenGate.Refusal.scope.rawValue
        }
        response = .error(refusal)
      }
      response.token = caller.logName
    }
    if let origin = policy.allowedCrossOrigin(request) {
      response.headers += [("Access-Control-Allow-Origin", origin), ("Vary", "Origin")]
    }
    return response
  }
}

extension HTTPError {
  /// Any error a handler throws, as a status.
  init(describing error: any Error) {
    switch error {
    case let error as HTTPError: self = error
    case let error as MsglogError: self.init(error)
    default: self.init(status: 500, message: "\(error)")
    }
  }
}
