/// What `verify` found: the log's size and every problem, each in one line.
public struct VerifyReport: Equatable, Sendable {
  public var events: UInt64 = 0
  public var streams = 0
  public var liveItems = 0
  /// One line per problem, each naming the seq or table concerned.
  public var problems: [String] = []
  /// Whether every event record is sound, so that any problem is in the
  /// derived tables alone and `verify --repair` can mend it.
  public var logIsIntact = true

  public var isClean: Bool { problems.isEmpty }
}
