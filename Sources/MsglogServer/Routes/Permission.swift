import Msglog

/// What a route needs of a named token, declared with the route in the
/// table (`Route.permission`) and checked in one place for every route
/// (`TokenGate.authorize`), so that no side route skips the check. The
/// operator's token and a server without tokens need none of it.
///
/// A `needsToken` route that declares none is refused to every named token
/// (403): a new route is closed until it says what it needs.
package enum Permission: Sendable, Equatable {
  /// Any valid token: the route shows no stream's events, or only those
  /// the token may read (its handler filters by `Caller.may`), or checks
  /// each change itself (a sync push).
  case anyToken
  /// `right` on the stream the request names.
  case stream(TokenScopes.Right, StreamSource)
  /// Reading every stream (`*`): a sync pull copies the whole log.
  case everyStream

  /// Where the stream a request is about is named.
  package enum StreamSource: Sendable, Equatable {
    /// The `stream` parameter, else `main`.
    case query
    /// The `stream` parameter; without it every stream the token may
    /// read, filtered by the handler (`/api/events`, `/api/follow`).
    case queryOrFiltered
    /// The body's `stream` member, else `main` (a write).
    case body
  }

  /// Whether checking it needs the request's body.
  var needsBody: Bool {
    self == .stream(.write, .body) || self == .stream(.erase, .body) || self == .stream(.read, .body)
  }
}

/// Who is asking, as the router found it before the handler runs
/// (`Request.caller`).
package enum Caller: Sendable {
  /// No token was needed: a server without one, on localhost.
  case open
  /// The operator's `--token`: every right, no name.
  case operatorToken
  /// A named token, live when it was looked up.
  case named(NamedToken)

  /// The token's name, the sender of what it writes; nil for the others.
  package var name: String? {
    if case .named(let token) = self { return token.name }
    return nil
  }

  /// As the request log names it: the token's name, `(operator)` (no
  /// token's name has parentheses), nil for none.
  package var logName: String? {
    switch self {
    case .open: return nil
    case .operatorToken: return "(operator)"
    case .named(let token): return token.name
    }
  }

  /// Whether it may do `right` to `stream`.
  package func may(_ right: TokenScopes.Right, _ stream: StreamName) -> Bool {
    guard case .named(let token) = self else { return true }
    return token.scopes.allows(right, on: stream)
  }

  /// Whether it may read every stream, with nothing to filter.
  package var readsEverything: Bool {
    guard case .named(let token) = self else { return true }
    return token.scopes.allowsEveryStream(.read)
  }
}
