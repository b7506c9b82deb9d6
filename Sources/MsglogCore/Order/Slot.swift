/// A position in a stream's projection: the item and the seq of the event
/// that inserted it (where its text, sender and time are).
public struct Slot: Equatable, Hashable, Sendable {
  public var id: ItemID
  public var seq: UInt64

  public init(id: ItemID, seq: UInt64) {
    self.id = id
    self.seq = seq
  }
}
