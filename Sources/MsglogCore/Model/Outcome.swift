/// What an accepted command appended.
public struct Outcome: Equatable, Sendable {
  public var event: Event
  /// insert, restore: where the item went; remove, edit: where it was; move: its final index.
  public var index: Int
  /// The command was made at an older version of the stream and transformed
  /// to its head (a rebase): the event's indices are the head's.
  public var rebased: Bool

  public init(event: Event, index: Int, rebased: Bool = false) {
    self.event = event
    self.index = index
    self.rebased = rebased
  }
}
