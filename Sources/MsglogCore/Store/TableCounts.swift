/// The row counts a store finds in its tables (from `mdb_stat`, not a scan).
package struct TableCounts: Equatable, Sendable {
  package var events: UInt64
  /// The per-stream event index: one row per event.
  package var streamEvents: UInt64
  package var heads: UInt64
  package var ids: UInt64
  package var nodes: UInt64
  package var checkpoints: UInt64

  package init(events: UInt64, streamEvents: UInt64, heads: UInt64, ids: UInt64, nodes: UInt64, checkpoints: UInt64) {
    self.events = events
    self.streamEvents = streamEvents
    self.heads = heads
    self.ids = ids
    self.nodes = nodes
    self.checkpoints = checkpoints
  }
}
