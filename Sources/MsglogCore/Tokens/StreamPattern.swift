/// Which streams a token's scope reaches (SPEC "Who may do what"): one
/// stream by its name; the streams under a prefix, `team/*`, matched on
/// `/` boundaries (`team/board` and `team/a/b`, never `team` nor
/// `team2/x`); or `*`, every stream.
public enum StreamPattern: Hashable, Sendable, CustomStringConvertible {
  case stream(StreamName)
  /// The prefix with its final `/` (`team/`): a stream matches when its
  /// name starts with it and goes on after it.
  case under(String)
  case every

  /// Reads a pattern as `token add` takes it; a `*` anywhere but as the
  /// whole pattern or after a final `/` is refused, so that no pattern
  /// means something other than it seems (`team*` is no glob).
  public init(validating text: String) throws(MsglogError) {
    if text == "*" {
      self = .every
      return
    }
    let bad = MsglogError.namedToken(.malformedPattern(text))
    if text.hasSuffix("/*") {
      let prefix = String(text.dropLast(1))
      guard prefix.count > 1, !prefix.contains("*") else { throw bad }
      // The prefix is the start of a stream name: the same rules, less its length.
      guard (try? StreamName(validating: String(prefix.dropLast()))) != nil else { throw bad }
      self = .under(prefix)
      return
    }
    guard !text.contains("*"), let name = try? StreamName(validating: text) else { throw bad }
    self = .stream(name)
  }

  /// Whether `stream` is one of the streams the pattern names.
  public func matches(_ stream: StreamName) -> Bool {
    switch self {
    case .every: return true
    case .stream(let name): return name == stream
    case .under(let prefix):
      let name = stream.text.utf8
      return name.count > prefix.utf8.count && name.starts(with: prefix.utf8)
    }
  }

  /// As `token add` took it: `*`, `team/*`, `hr/pay`.
  public var description: String {
    switch self {
    case .every: return "*"
    case .stream(let name): return name.text
    case .under(let prefix): return prefix + "*"
    }
  }
}
