/// A store that can take a bulk import (`BulkImport`) table by table, each
/// table's rows in ascending key order: LMDB then appends them
/// (`MDB_APPEND`) instead of searching its B-trees for every row, and
/// PostgreSQL copies them (`COPY … FROM STDIN`).
///
/// A store whose own constraint refuses an inserted id a second time
/// (`enforcesUniqueInsertedIDs`) is not asked whether the log knows an id:
/// it throws `BulkImport.Unfit` when the log does, and the ledger then
/// performs the import (and refuses it in its own words).
package protocol BulkLoading: LogWriter {
  /// Lends `body` a function that appends a record; `body` calls it with
  /// seqs one after another, from the one after the head.
  func appendRecords(_ body: (_ append: (UInt64, UnsafeRawBufferPointer) throws -> Void) throws -> Void) throws

  /// The same, each record with its event (`EventRecord.encode(event)`),
  /// for a store that indexes the event's fields (PostgreSQL's events
  /// table: stream, version, inserted id) without decoding them again.
  /// By default, `appendRecords`.
  func appendEvents(_ body: (_ append: (Event, UnsafeRawBufferPointer) throws -> Void) throws -> Void) throws

  /// Lends `body` a function that puts a row into `table`; `body` calls it
  /// with strictly ascending keys (bytewise).
  func putAscending(
    _ table: BulkTable,
    _ body: (_ put: (_ key: UnsafeRawBufferPointer, _ value: UnsafeRawBufferPointer) throws -> Void) throws -> Void
  ) throws

  /// Called once every row is loaded, before the transaction commits: a
  /// store that put off work until then (PostgreSQL's keys, built after
  /// their rows) does it here. By default, nothing.
  func finishLoading() throws
}

/// The derived tables a bulk import fills row by row (the stream heads and
/// the summary are a few rows, put as a command puts them).
package enum BulkTable: Sendable {
  case order, ids, streamEvents, checkpoints
}

extension BulkLoading {
  package func finishLoading() throws {}

  package func appendEvents(_ body: (_ append: (Event, UnsafeRawBufferPointer) throws -> Void) throws -> Void) throws {
    try appendRecords { append in
      try withoutActuallyEscaping(append) { append in try body { event, record in try append(event.seq, record) } }
    }
  }
}
