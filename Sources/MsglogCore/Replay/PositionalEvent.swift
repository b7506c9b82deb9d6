/// An event reduced to what it does to positions: enough to fold it into a
/// projection without decoding its text.
package struct PositionalEvent: Equatable, Sendable {
  package enum Change: Equatable, Sendable {
    case insert(index: UInt64)
    case remove(index: UInt64)
    case move(from: UInt64, to: UInt64)
  }

  package var seq: UInt64
  package var version: UInt64
  package var id: ItemID
  package var change: Change

  package init(seq: UInt64, version: UInt64, id: ItemID, change: Change) {
    self.seq = seq
    self.version = version
    self.id = id
    self.change = change
  }
}

extension Event {
  package var positional: PositionalEvent {
    let change: PositionalEvent.Change
    switch op {
    case .insert(_, let index, _, _): change = .insert(index: index)
    case .remove(_, let index): change = .remove(index: index)
    case .move(_, let from, let to): change = .move(from: from, to: to)
    }
    return PositionalEvent(seq: seq, version: version, id: id, change: change)
  }
}
