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

/// A stream's items at some seq, stored so that `replay --at` need not fold
/// the log from the start.
public struct Checkpoint: Equatable, Sendable {
  public var stream: StreamName
  public var seq: UInt64
  public var version: UInt64
  public var slots: [Slot]

  public init(stream: StreamName, seq: UInt64, version: UInt64, slots: [Slot]) {
    self.stream = stream
    self.seq = seq
    self.version = version
    self.slots = slots
  }
}

/// The id index: for every id ever inserted, where it came in and went out.
public struct IdEntry: Equatable, Sendable {
  public var insertSeq: UInt64
  /// Seq of the remove event, 0 while the item is live.
  public var removeSeq: UInt64
  /// The leaf of the stream's order tree that holds the item while it is live.
  public var leaf: NodeID

  public init(insertSeq: UInt64, removeSeq: UInt64 = 0, leaf: NodeID = 0) {
    self.insertSeq = insertSeq
    self.removeSeq = removeSeq
    self.leaf = leaf
  }
}

/// Read access to a log and its derived tables, valid inside one transaction.
///
/// The backend stores event records as opaque bytes (the core encodes and
/// decodes them) and the derived tables in whatever form suits it. LMDB is the
/// backend today; a server database would implement the same two protocols
/// with one SQL transaction per `read`/`write`.
public protocol LogReader {
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
  /// The summary of the derived tables; nil in a store that has none yet.
  func summary() throws -> LedgerSummary?
  /// The row count of every table, when the store can count in O(1) (nil otherwise).
  func tableCounts() throws -> TableCounts?
  /// Whether the bytes `forEachRecord` lends stay valid (unchanged) until
  /// the transaction ends or writes, not just during the call: a memory map
  /// (LMDB) does; a network result freed per batch does not. A full replay
  /// then decodes only the inserts whose items survive.
  var recordsStayMapped: Bool { get }

  // Batches: one request for many rows. A store over a network answers
  // each in one round trip; the defaults below loop over the single lookups.

  /// The records at `seqs` (any order), lent to `body` in ascending seq
  /// order; a seq with no record is skipped.
  func forEachRecord(at seqs: [UInt64], _ body: (UInt64, UnsafeRawBufferPointer) throws -> Void) throws
  /// The nodes `ids` of the stream's order tree that exist.
  func orderNodes(_ ids: [NodeID], of stream: StreamName) throws -> [NodeID: TreeNode<Slot>]
  /// The id index entries of `ids` that exist.
  func idEntries(_ ids: [ItemID]) throws -> [ItemID: IdEntry]
}

extension LogReader {
  public var recordsStayMapped: Bool { false }

  public func forEachRecord(at seqs: [UInt64], _ body: (UInt64, UnsafeRawBufferPointer) throws -> Void) throws {
    for seq in seqs.sorted() { try withRecord(at: seq) { try body(seq, $0) } }
  }

  public func orderNodes(_ ids: [NodeID], of stream: StreamName) throws -> [NodeID: TreeNode<Slot>] {
    var nodes: [NodeID: TreeNode<Slot>] = [:]
    for id in ids { nodes[id] = try orderNode(id, of: stream) }
    return nodes
  }

  public func idEntries(_ ids: [ItemID]) throws -> [ItemID: IdEntry] {
    var entries: [ItemID: IdEntry] = [:]
    for id in ids { entries[id] = try idEntry(id) }
    return entries
  }
}

/// Write access: append records and replace derived rows, inside one transaction
/// that commits all of it or none.
public protocol LogWriter: LogReader {
  /// Appends a record; `seq` is always `headSeq() + 1`.
  func appendRecord(_ bytes: [UInt8], seq: UInt64) throws
  func putStreamHead(_ head: StreamHead) throws
  func putOrderNode(_ node: TreeNode<Slot>, id: NodeID, of stream: StreamName) throws
  func deleteOrderNode(_ id: NodeID, of stream: StreamName) throws
  func putIdEntry(_ entry: IdEntry, for id: ItemID) throws
  /// Records that the stream has an event at `seq` (the per-stream event index).
  func putStreamEvent(_ seq: UInt64, of stream: StreamName) throws
  func putCheckpoint(_ checkpoint: Checkpoint) throws
  func putSummary(_ summary: LedgerSummary) throws
  /// Empties every derived table (and the summary), for a rebuild.
  func clearDerived() throws
  /// Whether the store itself refuses a second insert of an id (a unique
  /// constraint), so that a fresh random id need not be looked up first.
  var enforcesUniqueInsertedIDs: Bool { get }
  /// Whether reading many rows in one request is cheaper than one by one
  /// (a round trip to a server), so that a batch should prefetch them; a
  /// local store reads a row in a B-tree lookup and gains nothing.
  var prefersBatchedReads: Bool { get }
}

extension LogWriter {
  public var enforcesUniqueInsertedIDs: Bool { false }
  public var prefersBatchedReads: Bool { false }
}

/// A place that keeps a log: serialised write transactions, snapshot reads.
public protocol EventStore: AnyObject {
  /// Runs `body` in a read-only snapshot of the store.
  func read<R>(_ body: (any LogReader) throws -> R) throws -> R
  /// Runs `body` in a write transaction: committed (durably) when it returns,
  /// rolled back when it throws. Writers are serialised, so `headSeq()` does not
  /// move under `body`. `body` may be run again if the backend needs to retry.
  /// `reserving` estimates the bytes the write adds, so that a backend can
  /// make room once rather than retry a large batch on every growth.
  func write<R>(reserving bytes: Int, _ body: (any LogWriter) throws -> R) throws -> R
  /// The same, told which streams the write touches, so that a store across
  /// a network can fetch their state with the transaction's first round trip.
  func write<R>(reserving bytes: Int, touching streams: [StreamName], _ body: (any LogWriter) throws -> R) throws -> R
}

extension EventStore {
  public func write<R>(_ body: (any LogWriter) throws -> R) throws -> R {
    try write(reserving: 0, body)
  }

  public func write<R>(reserving bytes: Int, touching streams: [StreamName], _ body: (any LogWriter) throws -> R)
    throws -> R
  {
    try write(reserving: bytes, body)
  }
}

/// Wakes a follower when the log may have grown, from any process.
///
/// The store decides how (inotify on LMDB's data file, `LISTEN` on
/// PostgreSQL); a follower polls `fileDescriptor` together with whatever
/// else it waits for, and never sleeps in a loop.
public protocol CommitWatcher: AnyObject {
  /// Readable when a commit may have happened since the last `drain()`.
  var fileDescriptor: Int32 { get }
  /// Consumes what woke the descriptor.
  func drain() throws
}

/// A store whose commits can be watched.
public protocol FollowableStore: EventStore {
  func watchCommits() throws -> any CommitWatcher
}

extension LogReader {
  /// Each event from `seq` on, decoded and checked, until `body` returns
  /// false; a damaged record stops the walk with an error naming its seq.
  public func forEachEvent(from seq: UInt64, _ body: (Event) throws -> Bool) throws {
    try forEachRecord(from: seq) { recordSeq, bytes in try body(try decodeRecord(bytes, seq: recordSeq)) }
  }

  /// Decodes the record at `seq`, turning damage into an error that names the seq.
  public func event(at seq: UInt64) throws -> Event? {
    try withRecord(at: seq) { try decodeRecord($0, seq: seq) }
  }
}

/// Decodes a stored record, checking that it sits under its own seq.
public func decodeRecord(_ bytes: UnsafeRawBufferPointer, seq: UInt64) throws(MsglogError) -> Event {
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
