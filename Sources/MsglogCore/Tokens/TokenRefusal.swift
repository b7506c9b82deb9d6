/// Why a token command was refused (`MsglogError.namedToken`): the data,
/// words at the edge (`description` names no command or option).
public enum TokenRefusal: Equatable, Sendable, CustomStringConvertible {
  /// A NAME that is not 1–64 of `[A-Za-z0-9._-]`.
  case malformedName(String)
  /// A pattern that is no stream name, `prefix/*` nor `*`.
  case malformedPattern(String)
  /// A duration that is not a positive number of days, hours or minutes.
  case malformedDuration(String)
  /// A live token has the name already.
  case nameTaken(String)
  /// No token has this id, nor any live token this name.
  case noSuchToken(String)
  /// The token named is revoked already.
  case alreadyRevoked(name: String, id: String)
  /// Tokens are the server's: a replica keeps none.
  case inReplica(location: String)
  /// The store keeps no tokens (a log in memory of an older kind).
  case notKept(location: String)
  /// The token may not do `right` to `stream` (a pushed change is refused so).
  case mayNot(token: String, right: TokenScopes.Right, stream: StreamName)
  /// A push for a replica another token pushed for first.
  case replicaOwned(replica: ItemID, token: String)

  /// Whether it is the server's "this token may not" (HTTP 403).
  public var isForbidden: Bool {
    switch self {
    case .mayNot, .replicaOwned: return true
    default: return false
    }
  }

  public var isInvalidInput: Bool {
    switch self {
    case .malformedName, .malformedPattern, .malformedDuration: return true
    default: return false
    }
  }

  public var description: String {
    switch self {
    case .malformedName(let name):
      return
        "invalid token name \(TerminalText.quoted(name)): expected 1 to 64 letters, digits, '.', '_' or '-', not '-' alone"
    case .malformedPattern(let text):
      return
        "invalid stream pattern \(TerminalText.quoted(text)): expected a stream name, a prefix ending in '/*', or '*'"
    case .malformedDuration(let text):
      return
        "invalid duration \(TerminalText.quoted(text)): expected a whole number of days, hours or minutes (30d, 12h, 90m)"
    case .nameTaken(let name): return "a live token is named \(TerminalText.quoted(name)) already"
    case .noSuchToken(let text): return "no token has the id \(TerminalText.quoted(text)), nor is a live one so named"
    case .alreadyRevoked(let name, let id): return "token \(name) (\(id)) is revoked already"
    case .inReplica(let location): return "\(location) is a replica: tokens are kept by the log it syncs with"
    case .notKept(let location): return "\(location) keeps no tokens"
    case .mayNot(let token, let right, let stream):
      return "token \(token) may not \(right.rawValue) stream \(stream.text)"
    case .replicaOwned(let replica, let token):
      return "replica \(replica.text) is pushed for by another token than \(token)"
    }
  }
}

/// A duration as `token add --expires` takes it: `30d`, `12h`, `90m`.
public struct TokenLifetime: Equatable, Sendable {
  public var milliseconds: Int64

  public init(validating text: String) throws(MsglogError) {
    let bad = MsglogError.namedToken(.malformedDuration(text))
    guard let unit = text.last, let number = Int64(text.dropLast()), number > 0,
      text.dropLast().allSatisfy({ $0.isASCII && $0.isNumber })
    else { throw bad }
    let per: Int64
    switch unit {
    case "d": per = 86_400_000
    case "h": per = 3_600_000
    case "m": per = 60_000
    default: throw bad
    }
    // At most about a hundred years: beyond that it is a typo.
    guard number <= 36_600 * 86_400_000 / per else { throw bad }
    milliseconds = number * per
  }
}
