/// What `importLines` did.
public struct ImportResult: Equatable, Sendable {
  /// Events appended (a move onto itself appends none).
  public var imported: Int
  /// The head of the log afterwards.
  public var head: UInt64
}
