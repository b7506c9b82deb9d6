import Msglog
import Synchronization

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
    /// Who the request is from needs a read of the log, which this
    /// resolving may not do (`respondWithoutWaiting`: a worker's to decide).
    case needsReading
  }

  /// Decides from the request line and headers alone (the body is not
  /// needed, and is not read when the answer is a refusal).
  ///
  /// - Parameter lookingUp: whether the log may be read for the token (not
  ///   on an event loop: `TokenGate.caller`).
  package func resolve(_ request: Request, lookingUp: Bool = true) -> Resolution {
    resolve(request, lookingUp ? .reading : .refusingEarly)
  }

  /// How far resolving may go to learn who a request is from (`TokenGate`).
  private enum Lookup {
    /// The log read where needed (a worker).
    case reading
    /// Never a read: only what needs none is refused (an event loop's look
    /// at a head), and `.needsReading` when who sent it takes a read to
    /// know (a bearer token not the operator's, or none where the log was
    /// not seen lately to hold no named token): its body waits for it.
    case refusingEarly
    /// Never a read: `.needsReading` when one is needed (an event loop's write).
    case knownOnly
  }

  private func resolve(_ request: Request, _ lookup: Lookup) -> Resolution {
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
      // Refused early only for what needs no read; the rest is a worker's.
      var undecided = false
      if route.needsToken {
        if let gate {
          switch lookup {
          case .reading: caller = try gate.caller(of: request, policy: policy)
          case .refusingEarly:
            caller = try gate.caller(of: request, policy: policy, lookingUp: false)
            undecided = try gate.knownCaller(of: request, policy: policy) == nil
          case .knownOnly:
            guard let known = try gate.knownCaller(of: request, policy: policy) else { return .needsReading }
            caller = known
          }
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
            + (route.parameters.isEmpty
              ? " (it takes none)" : " (it takes \(route.parameters.sorted().joined(separator: ", ")))"))
      }
      return undecided ? .needsReading : .route(route, caller)
    } catch {
      return .refused(error)
    }
  }

  /// The answer to a whole request; `failed` is told of what a handler
  /// threw that is the server's or the store's (a status of 500 or more),
  /// for the operator's log.
  package func respond(to request: Request, failed: ((any Error, HTTPError) -> Void)? = nil) -> Response {
    let resolution = resolve(request)
    guard case .route(let route, let caller) = resolution else { return refusal(resolution, request, failed) }
    return finish(Result { try handled(route, request, caller) }, to: request, caller, failed: failed)
  }

  /// `respond`, answered later where the route's handler is deferred (a
  /// write: `answer` is then called by the thread that commits it), now
  /// otherwise.
  package func respond(
    to request: Request, failed: (@Sendable (any Error, HTTPError) -> Void)? = nil,
    then answer: @escaping @Sendable (Response) -> Void
  ) {
    let resolution = resolve(request)
    guard case .route(let route, let caller) = resolution else { return answer(refusal(resolution, request, failed)) }
    guard let deferred = route.deferred else {
      return answer(finish(Result { try handled(route, request, caller) }, to: request, caller, failed: failed))
    }
    run(deferred, route, request, caller, buildsHere: true, failed, answer)
  }

  /// `respond(to:failed:then:)` begun on an event loop, which must not
  /// wait for the store: only a deferred write whose caller needs no read
  /// of the log (`TokenGate.knownCaller`) is taken — its batch is built on
  /// another thread, and the thread that commits it answers — sparing it a
  /// worker's wake-up; false for any other request, for a worker to answer.
  package func respondWithoutWaiting(
    to request: Request, failed: (@Sendable (any Error, HTTPError) -> Void)? = nil,
    then answer: @escaping @Sendable (Response) -> Void
  ) -> Bool {
    guard request.method == "POST", case .route(let route, let caller) = resolve(request, .knownOnly),
      let deferred = route.deferred
    else { return false }
    run(deferred, route, request, caller, buildsHere: false, failed, answer)
    return true
  }

  /// A deferred route's handler, its answer finished as any route's, and
  /// given once: a handler that threw after it had queued its work
  /// (which it must not) is not answered twice.
  private func run(
    _ deferred: @Sendable (Request, Route.Deferral) throws -> Void, _ route: Route, _ request: Request,
    _ caller: Caller, buildsHere: Bool, _ failed: (@Sendable (any Error, HTTPError) -> Void)?,
    _ answer: @escaping @Sendable (Response) -> Void
  ) {
    let once = Once()
    let finished: @Sendable (Result<Response, any Error>) -> Void = { [self] result in
      guard once.first() else { return }
      answer(finish(result, to: request, caller, failed: failed))
    }
    do {
      try deferred(try authorized(route, request, caller), Route.Deferral(buildsHere: buildsHere, answer: finished))
    } catch {
      finished(.failure(error))
    }
  }

  /// True the first time it is asked, false after.
  private final class Once: Sendable {
    private let asked = Atomic(false)
    func first() -> Bool { !asked.exchange(true, ordering: .acquiringAndReleasing) }
  }

  /// The answer to a resolution that is not a route: a refusal, or a preflight's.
  /// A refusal of the server's or the store's (a status of 500 or more:
  /// the log could not be read to look a token up) is told to `failed`,
  /// for the operator's log, as a handler's is.
  private func refusal(
    _ resolution: Resolution, _ request: Request, _ failed: ((any Error, HTTPError) -> Void)?
  ) -> Response {
    var response: Response
    switch resolution {
    case .refused(let error):
      if error.status >= 500 { failed?(error, error) }
      response = .error(error)
      response.closesConnection = true
    case .preflight(let methods):
      response = Response(status: 204, contentType: "text/plain", body: .bytes([]))
      response.headers += [
        ("Access-Control-Allow-Methods", methods.joined(separator: ", ")),
        ("Access-Control-Allow-Headers", "Authorization, Content-Type, Last-Event-ID"),
        ("Access-Control-Max-Age", "600"),
      ]
    case .route, .needsReading:
      preconditionFailure("a route is answered by its handler, after the log is read where need be")
    }
    return withCORS(response, request)
  }

  /// A route's handler's answer.
  private func handled(_ route: Route, _ request: Request, _ caller: Caller) throws -> Response {
    try route.handler(try authorized(route, request, caller))
  }

  /// The request as its handler gets it: from `caller`, its body read by
  /// the gate first.
  private func authorized(_ route: Route, _ request: Request, _ caller: Caller) throws(HTTPError) -> Request {
    var request = request
    request.caller = caller
    try TokenGate.authorize(route, request, caller, withBody: true)
    return request
  }

  /// What a route's handler answered or threw, as the client gets it.
  private func finish(
    _ result: Result<Response, any Error>, to request: Request, _ caller: Caller,
    failed: ((any Error, HTTPError) -> Void)?
  ) -> Response {
    var response: Response
    switch result {
    case .success(let answered):
      response = answered
      if response.status < 400 { gate?.noteServed(caller) }
    case .failure(var error):
      // A named token's refusal names no stream it may not read.
      if case .named(let token) = caller, let refused = error as? MsglogError {
        error = refused.hidingStreams { token.scopes.allows(.read, on: $0) }
      }
      var refusal = HTTPError(describing: error)
      if refusal.status >= 500 { failed?(error, refusal) }
      if case MsglogError.namedToken(let why)? = error as? MsglogError, why.isForbidden {
        refusal.reason = TokenGate.Refusal.scope.rawValue
      }
      if let refused = error as? MsglogError, refused.isTheStoresRefusal {
        // The database refused (a read-only server or role, a missing
        // privilege): the operator's to fix, not the browser's rules.
        refusal.reason = TokenGate.Refusal.store.rawValue
        failed?(error, refusal)
      }
      response = .error(refusal)
    }
    response.token = caller.logName
    return withCORS(response, request)
  }

  /// CORS headers go only to an origin `--allow-origin` names.
  private func withCORS(_ response: Response, _ request: Request) -> Response {
    guard let origin = policy.allowedCrossOrigin(request) else { return response }
    var response = response
    response.headers += [("Access-Control-Allow-Origin", origin), ("Vary", "Origin")]
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
