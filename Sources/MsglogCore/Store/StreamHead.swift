/// A stream's counters, kept as derived data beside the log.
package struct StreamHead: Equatable, Sendable {
  package var stream: StreamName
  /// The stream's event count (its last event's version).
  package var version: UInt64
  /// Seq of the stream's last event.
  package var lastSeq: UInt64
  /// Live items.
  package var count: UInt64
  /// Root node of the stream's order tree (0 when it has no items).
  package var root: NodeID
  /// The next node id to hand out in the stream's order tree.
  package var nextNode: NodeID
  /// Version and item count at the stream's latest checkpoint (0, 0 before the first).
  package var checkpointVersion: UInt64
  package var checkpointCount: UInt64

  package init(
    stream: StreamName, version: UInt64 = 0, lastSeq: UInt64 = 0, count: UInt64 = 0, root: NodeID = 0,
    nextNode: NodeID = 1, checkpointVersion: UInt64 = 0, checkpointCount: UInt64 = 0
  ) {
    self.stream = stream
    self.version = version
    self.lastSeq = lastSeq
    self.count = count
    self.root = root
    self.nextNode = nextNode
    self.checkpointVersion = checkpointVersion
    self.checkpointCount = checkpointCount
  }

  /// The counters a replay can check (the tree layout and checkpoint
  /// bookkeeping are the write path's own business).
  package var counters: [UInt64] { [version, lastSeq, count] }
}
