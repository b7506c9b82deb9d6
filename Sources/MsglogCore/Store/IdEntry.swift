/// The id index: for every id ever inserted, where it came in and went out.
package struct IdEntry: Equatable, Sendable {
  package var insertSeq: UInt64
  /// Seq of the remove event, 0 while the item is live.
  package var removeSeq: UInt64
  /// The leaf of the stream's order tree that holds the item while it is live.
  package var leaf: NodeID

  package init(insertSeq: UInt64, removeSeq: UInt64 = 0, leaf: NodeID = 0) {
    self.insertSeq = insertSeq
    self.removeSeq = removeSeq
    self.leaf = leaf
  }
}
