/// What `importLines` did.
public struct ImportResult: Equatable, Sendable {
  /// Events appended (a move onto itself appends none).
  public var imported: Int
  /// The head of the log afterwards.
  public var head: UInt64
  /// In a replica, the pending changes the import made (its events wait
  /// there for a sync and have no seqs yet); nil elsewhere.
  public var pending: ClosedRange<UInt64>? = nil
}
