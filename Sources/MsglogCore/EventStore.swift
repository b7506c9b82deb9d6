/// A stream's counters, kept as derived data beside the log.
public struct StreamHead: Equatable, Sendable {
  public var stream: String
  /// The stream's event count (its last event's version).
  public var version: UInt64
  /// Seq of the stream's last event.
  public var lastSeq: UInt64
  /// Live items.
  public var count: UInt64

  public init(stream: String, version: UInt64 = 0, lastSeq: UInt64 = 0, count: UInt64 = 0) {
    self.stream = stream
    self.version = version
    self.lastSeq = lastSeq
    self.count = count
  }
}

/// The id index: for every id ever inserted, where it came in and went out.
public struct IdEntry: Equatable, Sendable {
  public var insertSeq: UInt64
  /// Seq of the remove event, 0 while the item is live.
  public var removeSeq: UInt64

  public init(insertSeq: UInt64, removeSeq: UInt64 = 0) {
    self.insertSeq = insertSeq
    self.removeSeq = removeSeq
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
  func streamHead(_ stream: String) throws -> StreamHead?
  /// Every stream head, in bytewise order of the names.
  func streamHeads() throws -> [StreamHead]
  /// The ids of the stream's live items, in order.
  func order(of stream: String) throws -> [ItemID]
  func idEntry(_ id: ItemID) throws -> IdEntry?
  /// Every id index entry, for `verify`.
  func forEachIdEntry(_ body: (ItemID, IdEntry) throws -> Void) throws
}

/// Write access: append records and replace derived rows, inside one transaction
/// that commits all of it or none.
public protocol LogWriter: LogReader {
  /// Appends a record; `seq` is always `headSeq() + 1`.
  func appendRecord(_ bytes: [UInt8], seq: UInt64) throws
  func putStreamHead(_ head: StreamHead) throws
  func putOrder(_ ids: [ItemID], of stream: String) throws
  func putIdEntry(_ entry: IdEntry, for id: ItemID) throws
  /// Empties every derived table (heads, order, id index), for a rebuild.
  func clearDerived() throws
}

/// A place that keeps a log: serialised write transactions, snapshot reads.
public protocol EventStore: AnyObject {
  /// Runs `body` in a read-only snapshot of the store.
  func read<R>(_ body: (any LogReader) throws -> R) throws -> R
  /// Runs `body` in a write transaction: committed (durably) when it returns,
  /// rolled back when it throws. Writers are serialised, so `headSeq()` does not
  /// move under `body`. `body` may be run again if the backend needs to retry.
  func write<R>(_ body: (any LogWriter) throws -> R) throws -> R
}

extension LogReader {
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
    throw corruption(seq: seq, "\(error)")
  }
  guard event.seq == seq else { throw corruption(seq: seq, "record holds seq \(event.seq)") }
  return event
}

func corruption(seq: UInt64, _ reason: String) -> MsglogError {
  .refused(
    "corrupted record at seq \(seq): \(reason)",
    hint: "run 'msglog verify' for a full report; nothing after this point was printed")
}
