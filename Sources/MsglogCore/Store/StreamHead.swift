/// A stream's counters, kept as derived data beside the log.
public struct StreamHead: Equatable, Sendable {
  public var stream: StreamName
  /// The stream's event count (its last event's version).
  public var version: UInt64
  /// Seq of the stream's last event.
  public var lastSeq: UInt64
  /// Live items.
  public var count: UInt64
  /// Root node of the stream's order tree (0 when it has no items).
  public var root: NodeID
  /// The next node id to hand out in the stream's order tree.
  public var nextNode: NodeID
  /// Version and item count at the stream's latest checkpoint (0, 0 before the first).
  public var checkpointVersion: UInt64
  public var checkpointCount: UInt64

  public init(
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
  public var counters: [UInt64] { [version, lastSeq, count] }
}
