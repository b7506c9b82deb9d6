/// The row counts a store finds in its tables (from `mdb_stat`, not a scan).
public struct TableCounts: Equatable, Sendable {
  public var events: UInt64
  /// The per-stream event index: one row per event.
  public var streamEvents: UInt64
  public var heads: UInt64
  public var ids: UInt64
  public var nodes: UInt64
  public var checkpoints: UInt64

  public init(events: UInt64, streamEvents: UInt64, heads: UInt64, ids: UInt64, nodes: UInt64, checkpoints: UInt64) {
    self.events = events
    self.streamEvents = streamEvents
    self.heads = heads
    self.ids = ids
    self.nodes = nodes
    self.checkpoints = checkpoints
  }
}
