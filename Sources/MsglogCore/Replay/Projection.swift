/// A stream's ordered array, built by folding its events in seq order.
///
/// Each position holds a `Slot`: the item's id and the seq of its text
/// record (its insert, or its latest edit), where its text is. `apply`
/// implements docs/REFERENCE.md's event table in O(log n) and checks every
/// event against the state — the recorded index of a remove or an edit and
/// the recorded id of a move must match, and an edit must replace the text
/// record the item has — so a log written by anything but a correct msglog
/// is caught at the first event that does not fit.
package struct Projection {
  package private(set) var slots = OrderedList<Slot>()
  /// The stream's version: how many of its events have been folded in.
  package private(set) var version: UInt64 = 0

  package init() {}

  /// Starts from a checkpoint: the slots and version at some seq.
  package init(slots: [Slot], version: UInt64) {
    self.slots = OrderedList(slots)
    self.version = version
  }

  package var count: Int { slots.count }

  /// The item ids in order.
  package var ids: [ItemID] { slots.elements.map(\.id) }

  package mutating func apply(_ event: Event) throws(ReplayError) {
    try apply(event.positional)
  }

  /// Folds one event of this stream into the array.
  package mutating func apply(_ event: PositionalEvent) throws(ReplayError) {
    guard event.version == version + 1 else {
      throw ReplayError(seq: event.seq, reason: "stream version \(event.version) follows \(version)")
    }
    let count = UInt64(slots.count)
    switch event.change {
    case .insert(let index):
      guard index <= count else {
        throw ReplayError(seq: event.seq, reason: "insert at index \(index) of a stream with \(count) items")
      }
      slots.insert(Slot(id: event.id, seq: event.seq), at: Int(index))
    case .remove(let index):
      guard index < count else {
        throw ReplayError(
          seq: event.seq, reason: "remove records \(event.id.text) at index \(index), but nothing is there")
      }
      // Remove first and put back on a mismatch: one descent of the tree, not two.
      let removed = slots.remove(at: Int(index))
      guard removed.id == event.id else {
        slots.insert(removed, at: Int(index))
        throw ReplayError(
          seq: event.seq, reason: "remove records \(event.id.text) at index \(index), but \(removed.id.text) is there")
      }
    case .move(let from, let to):
      guard from < count, to < count else {
        throw ReplayError(seq: event.seq, reason: "move \(from) -> \(to) in a stream with \(count) items")
      }
      let moved = slots.remove(at: Int(from))
      guard moved.id == event.id else {
        slots.insert(moved, at: Int(from))
        throw ReplayError(
          seq: event.seq, reason: "move records \(event.id.text) at index \(from), but \(moved.id.text) is there")
      }
      slots.insert(moved, at: Int(to))
    case .edit(let index, let replaces):
      guard index < count else {
        throw ReplayError(seq: event.seq, reason: "edit records \(event.id.text) at index \(index), but nothing is there")
      }
      let slot = slots[Int(index)]
      guard slot.id == event.id else {
        throw ReplayError(
          seq: event.seq, reason: "edit records \(event.id.text) at index \(index), but \(slot.id.text) is there")
      }
      guard slot.seq == replaces else {
        throw ReplayError(
          seq: event.seq,
          reason: "edit of \(event.id.text) replaces the text of seq \(replaces), but its text is that of seq \(slot.seq)")
      }
      slots.replace(at: Int(index), with: Slot(id: event.id, seq: event.seq))
    case .restore(let index, let textSeq):
      guard index <= count else {
        throw ReplayError(seq: event.seq, reason: "restore at index \(index) of a stream with \(count) items")
      }
      slots.insert(Slot(id: event.id, seq: textSeq), at: Int(index))
    }
    version = event.version
  }
}
