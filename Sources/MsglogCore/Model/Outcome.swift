/// What an accepted command appended.
public struct Outcome: Equatable, Sendable {
  public var event: Event
  /// insert, restore: where the item went; remove, edit: where it was; move: its final index.
  public var index: Int
  /// The command was made at an older version of the stream and transformed
  /// to its head (a rebase): the event's indices are the head's.
  public var rebased: Bool
  /// In a replica: the number of the pending change the command became
  /// (its event is the local view's, not yet the remote's).
  public var pending: UInt64?

  public init(event: Event, index: Int, rebased: Bool = false, pending: UInt64? = nil) {
    self.event = event
    self.index = index
    self.rebased = rebased
    self.pending = pending
  }
}
