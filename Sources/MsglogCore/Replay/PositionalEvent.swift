/// An event reduced to what it does to positions: enough to fold it into a
/// projection without decoding its text, and to follow a position of a
/// past list forward (`LaterEvents`).
package struct PositionalEvent: Equatable, Sendable {
  package enum Change: Equatable, Sendable {
    case insert(index: UInt64)
    case remove(index: UInt64)
    case move(from: UInt64, to: UInt64)
    /// The item at `index` gets the edit's record as its text record;
    /// `replaces` is the text record it had.
    case edit(index: UInt64, replaces: UInt64)
    /// The item comes back at `index` with the text record `textSeq`.
    case restore(index: UInt64, textSeq: UInt64)
    /// The item is erased: it leaves the list from `index` when it was
    /// live, and nothing moves when it was removed already (nil).
    case erase(index: UInt64?)
    /// An edit's sender taken off: no position changes.
    case unsign
  }

  package var seq: UInt64
  package var version: UInt64
  package var id: ItemID
  package var change: Change
  /// The seq of the event this one undoes, 0 when none.
  package var undoes: UInt64

  package init(seq: UInt64, version: UInt64, id: ItemID, change: Change, undoes: UInt64 = 0) {
    self.seq = seq
    self.version = version
    self.id = id
    self.change = change
    self.undoes = undoes
  }
}

extension Event {
  package var positional: PositionalEvent {
    let change: PositionalEvent.Change
    switch op {
    case .insert(_, let index, _, _): change = .insert(index: index)
    case .remove(_, let index): change = .remove(index: index)
    case .move(_, let from, let to): change = .move(from: from, to: to)
    case .edit(_, _, _, let index, let replaces, _): change = .edit(index: index, replaces: replaces)
    case .restore(_, let index, let textSeq): change = .restore(index: index, textSeq: textSeq)
    case .erase(_, let index): change = .erase(index: index)
    case .unsign: change = .unsign
    }
    return PositionalEvent(seq: seq, version: version, id: id, change: change, undoes: undoes ?? 0)
  }
}
