/// What an accepted command appended.
public struct Outcome: Equatable, Sendable {
  public var event: Event
  /// insert: where the item went; remove: where it was; move: its final index.
  public var index: Int

  public init(event: Event, index: Int) {
    self.event = event
    self.index = index
  }
}
