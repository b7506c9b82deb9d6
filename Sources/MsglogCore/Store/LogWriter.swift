/// Write access: append records and replace derived rows, inside one transaction
/// that commits all of it or none.
package protocol LogWriter: LogReader {
  /// Appends `event`, whose record (`EventRecord.encode(event, layout: recordLayout)`) is
  /// `record`: a store keeps the bytes, and may index the event's fields
  /// without decoding them again. Its seq is always `headSeq() + 1`.
  func appendRecord(_ record: [UInt8], of event: Event) throws
  /// Writes `record`, the encoding of `event`, over the record at
  /// `event.seq` (an erase blanking an insert or an edit): same seq, same
  /// key; the frame is unchanged, only the body (or, for a whole record
  /// becoming framed, the layout) differs.
  func replaceRecord(_ record: [UInt8], of event: Event) throws
  func putStreamHead(_ head: StreamHead) throws
  func putOrderNode(_ node: TreeNode<Slot>, id: NodeID, of stream: StreamName) throws
  func deleteOrderNode(_ id: NodeID, of stream: StreamName) throws
  func putIdEntry(_ entry: IdEntry, for id: ItemID) throws
  /// Records that the stream has an event at `seq` (the per-stream event index).
  func putStreamEvent(_ seq: UInt64, of stream: StreamName) throws
  func putCheckpoint(_ checkpoint: Checkpoint) throws
  func putSummary(_ summary: RecordedCounts) throws
  /// Empties every derived table (and the summary), for a rebuild.
  func clearDerived() throws
  /// Drops the history before `plan.horizon` (`msglog trim`): every record
  /// below it but `plan.kept`, the event index, checkpoints and id entries
  /// of what is gone; puts the bases and the horizon. Returns how many
  /// records it dropped; nil from a store that cannot trim (nothing done).
  func trim(_ plan: TrimPlan) throws -> UInt64?
  /// Puts a trimmed log's horizon and bases (an import of a trimmed log's
  /// export, into an empty database); false from a store that cannot trim.
  func putTrimmedHistory(_ horizon: Horizon, bases: [StreamBase], retired: [RetiredItem]) throws -> Bool
  /// Whether the store itself refuses a second insert of an id (a unique
  /// constraint), so that a fresh random id need not be looked up first.
  var enforcesUniqueInsertedIDs: Bool { get }
  /// Whether reading many rows in one request is cheaper than one by one
  /// (a round trip to a server), so that a batch should prefetch them; a
  /// local store reads a row in a B-tree lookup and gains nothing.
  var prefersBatchedReads: Bool { get }
  /// The time of the events this transaction appends by the store's own
  /// clock (a server's, so that machines with different clocks agree),
  /// never earlier than the log's last event; nil where the log's
  /// configured clock is the one.
  var commitTime: Timestamp? { get }
}

extension LogWriter {
  package func trim(_ plan: TrimPlan) throws -> UInt64? { nil }
  package func putTrimmedHistory(_ horizon: Horizon, bases: [StreamBase], retired: [RetiredItem]) throws -> Bool {
    false
  }
  package var enforcesUniqueInsertedIDs: Bool { false }
  package var prefersBatchedReads: Bool { false }
  package var commitTime: Timestamp? { nil }
}
