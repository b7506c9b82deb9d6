/// The id index: for every id ever inserted, where it came in and went out.
package struct IdEntry: Equatable, Sendable {
  package var insertSeq: UInt64
  /// Seq of its latest remove event, 0 while the item is live.
  package var removeSeq: UInt64
  /// The leaf of the stream's order tree that holds the item while it is live.
  package var leaf: NodeID
  /// While the item is removed, the seq of the edit that gave it the text it
  /// had (a restore brings it back with that text); 0 when that is its insert.
  package var textSeq: UInt64

  package init(insertSeq: UInt64, removeSeq: UInt64 = 0, leaf: NodeID = 0, textSeq: UInt64 = 0) {
    self.insertSeq = insertSeq
    self.removeSeq = removeSeq
    self.leaf = leaf
    self.textSeq = textSeq
  }

  /// Whether the item was removed before `horizon`, a trim's: nothing of
  /// it is left there but this entry (`RetiredItem`).
  package func isRemoved(before horizon: UInt64) -> Bool { removeSeq != 0 && removeSeq < horizon }

  /// The record holding the text a removed item comes back with.
  package var removedTextSeq: UInt64 { textSeq == 0 ? insertSeq : textSeq }
}
