/// How many rows each derived table must hold, as the writes that made them
/// recorded it: the `summary` row (docs/FORMAT.md), checksummed like the others.
///
/// A store that can count a table's rows in O(1) — LMDB can, into
/// `TableCounts` — compares those counts with these on every write and every read of derived data,
/// so that a row deleted or added behind msglog's back is noticed at once,
/// without a scan: a write must never compute an event from tables that
/// disagree with the log.
package struct RecordedCounts: Equatable, Sendable {
  /// Events in the log (its head seq).
  package var events: UInt64 = 0
  /// Rows of `heads`: streams with at least one event.
  package var streams: UInt64 = 0
  /// Rows of `ids`: every id ever inserted.
  package var ids: UInt64 = 0
  /// Rows of `order`: nodes of all order trees.
  package var nodes: UInt64 = 0
  /// Rows of `checkpoints`.
  package var checkpoints: UInt64 = 0

  package init(events: UInt64 = 0, streams: UInt64 = 0, ids: UInt64 = 0, nodes: UInt64 = 0, checkpoints: UInt64 = 0) {
    self.events = events
    self.streams = streams
    self.ids = ids
    self.nodes = nodes
    self.checkpoints = checkpoints
  }
}
