import Msglog
import Synchronization

/// Who may do what (SPEC "Who may do what: named tokens"): once the log
/// holds a named token, every route that `needsToken` wants one — the
/// operator's (`--token`), or a live named token — and a named token may
/// do only what its scopes give, as the route's `Permission` declares.
///
/// The token is looked up in the log for each request (one read by its
/// id; on PostgreSQL a query), never cached: a revocation by `msglog
/// token revoke` — on any machine, for every `serve` of a PostgreSQL log —
/// counts from the next request on.
package final class TokenGate: Sendable {
  let log: EventLog
  /// Whether the log has been seen to hold a token. Tokens are never
  /// deleted (revoked ones count), so once true it stays true; until then
  /// a request without a named token asks the log again, so that the first
  /// `token add` counts without a restart.
  private let holdsTokens = Atomic(false)
  /// When the log was last asked and held none (`Deadline.now()`'s
  /// nanoseconds, taken before the ask; 0: not yet). A request with no
  /// token asks again only after `tokenlessRecheck`; one that presents a
  /// token always asks.
  private let noTokensSeenAt = Atomic<UInt64>(0)
  /// How long a "no tokens" answer stands for requests without a token
  /// (`EventLog.tokenlessAnswerLifetime`, which `token add` waits out for
  /// the log's first token: once it returns, every `serve` wants one).
  static let tokenlessRecheck = EventLog.tokenlessAnswerLifetime
  /// Failed tokens by client address, which slow that address alone.
  let failures = FailedTokens()
  /// The page's checks of a link's token before anyone agreed to it
  /// (`isOfferCheck`), failed, by client address: any page the browser
  /// opens can send a tab to links with made-up tokens, and counted as
  /// failed tokens they turned the address away — every named token of
  /// the machine with it. They have a budget of their own, smaller, so
  /// that guessing through them is slower still.
  let failedOffers = FailedTokens(limit: TokenGate.offerChecksPerWindow)
  /// Failed offer checks an address may make in a window.
  static let offerChecksPerWindow = 5

  /// Whether a request is the page's check of a link's token, before
  /// anyone agreed to sign in with it: `GET /api/whoami` sent with
  /// `X-Msglog-Offer: 1` (a header a foreign page cannot add without a
  /// preflight this server refuses it).
  static func isOfferCheck(_ request: Request) -> Bool {
    request.path == "/api/whoami" && request.header("x-msglog-offer") == "1"
  }

  package init(log: EventLog) {
    self.log = log
    if (try? log.holdsTokens()) == true { holdsTokens.store(true, ordering: .relaxed) }
  }

  /// The one answer to a missing, unknown, revoked or expired token: which
  /// it was is the server's log's to say (`reason`), not the client's.
  static func unauthorized(_ reason: Refusal) -> HTTPError {
    var error = HTTPError(
      status: 401, message: "a valid token is needed", headers: [("WWW-Authenticate", "Bearer")])
    error.reason = reason.rawValue
    return error
  }

  /// Why a token was refused, for the request log and the metrics.
  package enum Refusal: String, Sendable, CaseIterable {
    case missing, unknown, revoked, expired
    /// A valid token without the right (403).
    case scope
    /// Too many failed tokens from the client's address (429).
    case throttled
    /// The database refused (403): a read-only server or role, a missing
    /// privilege — its operator's to fix, not the token's.
    case store
  }

  /// Whether the log holds tokens, asking it until it is seen to.
  /// - Parameter presented: whether the request carries a token; without
  ///   one, a recent "none" stands (`tokenlessRecheck`).
  func logHoldsTokens(presented: Bool = true) throws(HTTPError) -> Bool {
    if holdsTokens.load(ordering: .relaxed) { return true }
    let now = Deadline.now().nanoseconds
    if !presented, sawNoTokens(lately: now) { return false }
    let holds: Bool
    do {
      holds = try log.holdsTokens()
    } catch MsglogError.permissionDenied {
      // A role that may not read the log's tables: whatever the request
      // is, its route is refused naming what the role lacks (and a role
      // that cannot read msglog.meta can read nothing of the log).
      return false
    } catch {
      throw HTTPError(describing: error)
    }
    if holds { holdsTokens.store(true, ordering: .relaxed) } else { noTokensSeenAt.store(now, ordering: .relaxed) }
    return holds
  }

  /// Whether the log was seen to hold no named token within `tokenlessRecheck` of `now`.
  private func sawNoTokens(lately now: UInt64) -> Bool {
    let seen = noTokensSeenAt.load(ordering: .relaxed)
    return seen != 0 && now < seen &+ Self.tokenlessRecheck
  }

  /// Who the request is from; 401 when it may not come in at all.
  ///
  /// - Parameter lookingUp: false on an event loop, which must not wait
  ///   for the store: only what needs no read is refused there (no token
  ///   at all where one is known to be needed), and the rest is decided on
  ///   a worker.
  func caller(of request: Request, policy: RequestPolicy, lookingUp: Bool = true) throws(HTTPError) -> Caller {
    let bearer = RequestPolicy.bearer(request)
    if let bearer, policy.isOperatorToken(bearer) { return .operatorToken }
    guard lookingUp else {
      if bearer == nil, policy.token != nil || holdsTokens.load(ordering: .relaxed) {
        throw holdsTokens.load(ordering: .relaxed) ? Self.unauthorized(.missing) : neededByOperator(policy, request)
      }
      return .open
    }
    return try lookedUp(bearer, request, policy)
  }

  /// Who the request is from, when that needs no read of the log — the
  /// operator's token, or no token in a log seen lately to hold none —
  /// exactly as `caller` would say; nil when it needs one (or the client's
  /// address is being slowed down), for a worker to decide.
  func knownCaller(of request: Request, policy: RequestPolicy) throws(HTTPError) -> Caller? {
    let bearer = RequestPolicy.bearer(request)
    if let bearer, policy.isOperatorToken(bearer) { return .operatorToken }
    guard bearer == nil, !holdsTokens.load(ordering: .relaxed), sawNoTokens(lately: Deadline.now().nanoseconds)
    else { return nil }
    if let client = request.client, failures.retryAfter(client) != nil { return nil }
    // As `lookUp` in a log without named tokens (no failure counted there).
    return try withoutNamedTokens(request, policy)
  }

  /// `caller` with the log read: the client slowed down after failed
  /// tokens, a failure counted against its address.
  private func lookedUp(_ bearer: [UInt8]?, _ request: Request, _ policy: RequestPolicy) throws(HTTPError) -> Caller {
    let offer = Self.isOfferCheck(request)
    if let client = request.client,
      let seconds = failures.retryAfter(client) ?? (offer ? failedOffers.retryAfter(client) : nil)
    {
      var error = HTTPError(
        status: 429, message: "too many failed tokens from your address; retry in \(seconds) s",
        headers: [("Retry-After", String(seconds))])
      error.reason = Refusal.throttled.rawValue
      throw error
    }
    do throws(HTTPError) {
      return try lookUp(bearer, request, policy)
    } catch {
      // A token that was sent and failed counts against its address.
      if holdsTokens.load(ordering: .relaxed), let client = request.client, let reason = error.reason,
        reason != Refusal.missing.rawValue
      {
        (offer ? failedOffers : failures).failed(client)
      }
      throw error
    }
  }

  /// Who the request is from in a log without named tokens: the
  /// operator's token, if any, as before there were named tokens.
  private func withoutNamedTokens(_ request: Request, _ policy: RequestPolicy) throws(HTTPError) -> Caller {
    try policy.checkToken(request)
    return policy.token == nil ? .open : .operatorToken
  }

  private func lookUp(_ bearer: [UInt8]?, _ request: Request, _ policy: RequestPolicy) throws(HTTPError) -> Caller {
    guard try logHoldsTokens(presented: bearer != nil) else { return try withoutNamedTokens(request, policy) }
    guard let bearer, !bearer.isEmpty else { throw Self.unauthorized(.missing) }
    let token: NamedToken?
    do { token = try log.namedToken(presented: String(decoding: bearer, as: UTF8.self)) } catch {
      throw HTTPError(describing: error)
    }
    guard let token else { throw Self.unauthorized(.unknown) }
    switch token.standing(at: Timestamp.now()) {
    case .live: return .named(token)
    case .revoked: throw Self.unauthorized(.revoked)
    case .expired: throw Self.unauthorized(.expired)
    }
  }

  /// Records, now and then, that a named token was served (`token
  /// list`'s last use): after an answer that did something for it, so
  /// that a refused request changes nothing. A server that may not write
  /// (a reader's role, a standby) just does not record it.
  func noteServed(_ caller: Caller) {
    guard case .named(let token) = caller else { return }
    let now = Timestamp.now()
    guard token.lastUsed.map({ now.milliseconds - $0.milliseconds >= 300_000 }) ?? true else { return }
    try? log.noteUse(ofToken: token.id, at: now)
  }

  private func neededByOperator(_ policy: RequestPolicy, _ request: Request) -> HTTPError {
    do throws(HTTPError) {
      try policy.checkToken(request)
      return Self.unauthorized(.missing)
    } catch {
      return error
    }
  }

  /// 403 unless `caller` may use `route` for `request`: the one check of
  /// every route's declared permission. `withBody`: whether the body is
  /// there to be read (a write's stream is in it); without it such a
  /// check waits.
  static func authorize(_ route: Route, _ request: Request, _ caller: Caller, withBody: Bool) throws(HTTPError) {
    guard route.needsToken, case .named(let token) = caller else { return }
    guard let permission = route.permission else {
      throw forbidden("token \(token.name) may not use \(route.path)")
    }
    switch permission {
    case .anyToken: return
    case .everyStream:
      guard token.scopes.allowsEveryStream(.read) else {
        throw forbidden("token \(token.name) may not read every stream, which \(route.path) reads")
      }
    case .stream(let right, let source):
      let stream: StreamName
      switch source {
      case .query, .queryOrFiltered:
        guard let name = request.query["stream"] else {
          if source == .queryOrFiltered { return }
          return try check(token, right, .main)
        }
        // A malformed name is the handler's 400 to give.
        guard let valid = try? StreamName(validating: name) else { return }
        stream = valid
      case .body:
        guard withBody else { return }
        // Read as every handler reads its body (one parser, which refuses
        // duplicate keys), but only for "stream": the other members are
        // the handler's (an erase's "ids" is an array, which a write's
        // members are not). What the handler will refuse anyway (not
        // JSON, not an object, a stream that is no name) is its 400 to give;
        // no "stream" is stream main, checked as any other.
        guard case .object(let members)? = try? JSONParser.parse(request.body) else { return }
        switch members.first(where: { $0.0 == "stream" })?.1 {
        case nil: stream = .main
        case .string(let text)?:
          guard let named = try? StreamName(validating: text) else { return }
          stream = named
        default: return
        }
      }
      try check(token, right, stream)
    }
  }

  private static func check(_ token: NamedToken, _ right: TokenScopes.Right, _ stream: StreamName) throws(HTTPError) {
    guard token.scopes.allows(right, on: stream) else {
      throw forbidden("token \(token.name) may not \(right.rawValue) stream \(stream.text)")
    }
  }

  static func forbidden(_ message: String) -> HTTPError {
    var error = HTTPError.forbidden(message)
    error.reason = Refusal.scope.rawValue
    return error
  }
}
