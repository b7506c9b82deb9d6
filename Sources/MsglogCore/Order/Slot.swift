/// A position in a stream's projection: the item and the seq of the event
/// that inserted it (where its text, sender and time are).
package struct Slot: Equatable, Hashable, Sendable {
  package var id: ItemID
  package var seq: UInt64

  package init(id: ItemID, seq: UInt64) {
    self.id = id
    self.seq = seq
  }
}
