/// Read access to a log and its derived tables, valid inside one transaction.
///
/// A store keeps event records as opaque bytes (the core encodes and
/// decodes them) and the derived tables in whatever form suits it: LMDB's
/// named databases (`LMDBStore`), PostgreSQL's tables, read and written in
/// one SQL transaction per `read`/`write` (`PostgresStore`), or values in
/// memory (`MemoryStore`).
package protocol LogReader {
  /// Seq of the last event, 0 for an empty log.
  func headSeq() throws -> UInt64
  /// Calls `body` with each record from `seq` on, in seq order, until it returns false.
  ///
  /// - Warning: the buffer is valid only during the call.
  func forEachRecord(from seq: UInt64, _ body: (UInt64, UnsafeRawBufferPointer) throws -> Bool) throws
  /// The record at `seq`, lent to `body`; nil when there is none.
  func withRecord<R>(at seq: UInt64, _ body: (UnsafeRawBufferPointer) throws -> R) throws -> R?
  func streamHead(_ stream: StreamName) throws -> StreamHead?
  /// Every stream head, in bytewise order of the names.
  func streamHeads() throws -> [StreamHead]
  /// The streams the heads name, from their keys alone, in the same order,
  /// and how many keys are not a stream name: for `verify`, where one
  /// damaged row must not hide the others' names.
  func streamHeadNames() throws -> (names: [StreamName], notNames: Int)
  /// A node of the stream's order tree.
  func orderNode(_ id: NodeID, of stream: StreamName) throws -> TreeNode<Slot>?
  func idEntry(_ id: ItemID) throws -> IdEntry?
  /// Id index entries in id byte order from `start` on, until `body` returns false.
  func forEachIdEntry(from start: [UInt8], _ body: (ItemID, IdEntry) throws -> Bool) throws
  /// The seqs of the stream's events from `seq` on, until `body` returns false.
  func forEachStreamEvent(of stream: StreamName, from seq: UInt64, _ body: (UInt64) throws -> Bool) throws
  /// The stream's latest checkpoint at or before `seq`.
  func checkpoint(of stream: StreamName, atOrBefore seq: UInt64) throws -> Checkpoint?
  /// The seqs at which the stream has checkpoints, for `verify`.
  func checkpointSeqs(of stream: StreamName) throws -> [UInt64]
  /// The last seq in the stream's event index; nil when it has none.
  func lastStreamEvent(of stream: StreamName) throws -> UInt64?
  /// The stream's records from `seq` down, newest first, until `body`
  /// returns false: what an undo or a rebase reads, k records for the
  /// stream's last k events, whatever the size of the log.
  ///
  /// - Warning: the buffer is valid only during the call.
  func forEachStreamRecord(
    of stream: StreamName, downFrom seq: UInt64, _ body: (UInt64, UnsafeRawBufferPointer) throws -> Bool)
    throws
  /// The summary of the derived tables; nil in a store that has none yet.
  func summary() throws -> RecordedCounts?
  /// The row count of every table, when the store can count in O(1) (nil otherwise).
  func tableCounts() throws -> TableCounts?
  /// The row count of every table, by a scan where the store cannot count
  /// in O(1): for `verify`, which reads everything anyway and must find rows
  /// that nothing refers to. Nil in a store that cannot count at all.
  func rowCounts() throws -> TableCounts?
  /// Whether the bytes `forEachRecord` lends stay valid (unchanged) until
  /// the transaction ends or writes, not just during the call: a memory map
  /// (LMDB) does; a network result freed per batch does not. A full replay
  /// then decodes only the inserts whose items survive.
  var recordsStayMapped: Bool { get }
  /// How the store writes the records it appends (`EventRecord.Layout`):
  /// framed in an LMDB database made from `msglog/6` on, whole elsewhere.
  var recordLayout: EventRecord.Layout { get }

  // Batches: one request for many rows. A store over a network answers
  // each in one round trip; the defaults below loop over the single lookups.

  /// The records at `seqs` (any order), lent to `body` in ascending seq
  /// order; a seq with no record is skipped.
  func forEachRecord(at seqs: [UInt64], _ body: (UInt64, UnsafeRawBufferPointer) throws -> Void) throws
  /// The records at `seqs`, which ascend, each lent with its place in
  /// `seqs`; a seq with no record is skipped. No sorting and no copy: what
  /// `list` reads a batch of items' texts with.
  func forEachRecord(ascending seqs: UnsafeBufferPointer<UInt64>, _ body: (Int, UnsafeRawBufferPointer) throws -> Void)
    throws
  /// The nodes `ids` of the stream's order tree that exist.
  func orderNodes(_ ids: [NodeID], of stream: StreamName) throws -> [NodeID: TreeNode<Slot>]
  /// The slots of the leaves `ids` of the stream's order tree, appended to
  /// `slots` in the order of `ids`: what `list` reads a batch of leaves
  /// with. A missing node or one that is not a leaf is damage (`.order`).
  func appendLeafSlots(_ ids: [NodeID], of stream: StreamName, to slots: inout [Slot]) throws
  /// The id index entries of `ids` that exist.
  func idEntries(_ ids: [ItemID]) throws -> [ItemID: IdEntry]

  // A trimmed log (`TrimmedHistory.swift`). A store that cannot trim has
  // the defaults: history from seq 1, no bases.

  /// Where the log's history begins. `forEachRecord(from:)` walks nothing
  /// below it; the records the bases read are still there by seq.
  func horizon() throws -> Horizon
  /// Each trimmed stream's base, in bytewise order of the names.
  func bases() throws -> [StreamBase]

  /// What the store's files lack that the log uses (an LMDB data file cut
  /// short): `verify` names it and reads no further, where a read could
  /// fault. Nil where the files are whole, or in a store that cannot tell.
  func filesCutShort() throws -> LMDBFailure?
  /// The items the trims retired (`RetiredItem`), with the bases.
  func retiredItems() throws -> [RetiredItem]
}

extension LogReader {
  package var recordsStayMapped: Bool { false }

  /// Where heads are kept decoded (in memory), their names.
  package func streamHeadNames() throws -> (names: [StreamName], notNames: Int) {
    (try streamHeads().map(\.stream), 0)
  }

  package func horizon() throws -> Horizon { .none }

  package func bases() throws -> [StreamBase] { [] }

  package func filesCutShort() throws -> LMDBFailure? { nil }

  package func retiredItems() throws -> [RetiredItem] { [] }

  package var recordLayout: EventRecord.Layout { .whole }

  package func rowCounts() throws -> TableCounts? { try tableCounts() }

  package func forEachRecord(at seqs: [UInt64], _ body: (UInt64, UnsafeRawBufferPointer) throws -> Void) throws {
    for seq in seqs.sorted() { try withRecord(at: seq) { try body(seq, $0) } }
  }

  package func forEachRecord(
    ascending seqs: UnsafeBufferPointer<UInt64>, _ body: (Int, UnsafeRawBufferPointer) throws -> Void
  ) throws {
    for (place, seq) in seqs.enumerated() { try withRecord(at: seq) { try body(place, $0) } }
  }

  package func orderNodes(_ ids: [NodeID], of stream: StreamName) throws -> [NodeID: TreeNode<Slot>] {
    var nodes: [NodeID: TreeNode<Slot>] = [:]
    for id in ids { nodes[id] = try orderNode(id, of: stream) }
    return nodes
  }

  package func appendLeafSlots(_ ids: [NodeID], of stream: StreamName, to slots: inout [Slot]) throws {
    let nodes = try orderNodes(ids, of: stream)
    for id in ids {
      guard let node = nodes[id], node.isLeaf else { throw StoredOrder.missingLeaf(id, of: stream) }
      slots.append(contentsOf: node.elements)
    }
  }

  package func idEntries(_ ids: [ItemID]) throws -> [ItemID: IdEntry] {
    var entries: [ItemID: IdEntry] = [:]
    for id in ids { entries[id] = try idEntry(id) }
    return entries
  }
}

extension LogReader {
  /// Each event from `seq` on, decoded and checked, until `body` returns
  /// false; a damaged record stops the walk with an error naming its seq.
  package func forEachEvent(from seq: UInt64, _ body: (Event) throws -> Bool) throws {
    try forEachRecord(from: seq) { recordSeq, bytes in try body(try decodeRecord(bytes, seq: recordSeq)) }
  }

  /// Decodes the record at `seq`, turning damage into an error that names the seq.
  package func event(at seq: UInt64) throws -> Event? {
    try withRecord(at: seq) { try decodeRecord($0, seq: seq) }
  }
}

/// Decodes a stored record, checking that it sits under its own seq.
package func decodeRecord(_ bytes: UnsafeRawBufferPointer, seq: UInt64) throws(MsglogError) -> Event {
  let event: Event
  do {
    event = try EventRecord.decode(bytes)
  } catch {
    throw .corrupted(seq: seq, error)
  }
  guard event.seq == seq else { throw .corrupted(seq: seq, "record holds seq \(event.seq)") }
  return event
}

func corruption(seq: UInt64, _ reason: String) -> MsglogError { .corruptedRecord(seq: seq, reason: reason) }
