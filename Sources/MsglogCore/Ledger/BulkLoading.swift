/// A store that can take a bulk import (`BulkImport`) table by table, each
/// table's rows in ascending key order: LMDB then appends them
/// (`MDB_APPEND`) instead of searching its B-trees for every row.
package protocol BulkLoading: LogWriter {
  /// Lends `body` a function that appends a record; `body` calls it with
  /// seqs one after another, from the one after the head.
  func appendRecords(_ body: (_ append: (UInt64, UnsafeRawBufferPointer) throws -> Void) throws -> Void) throws

  /// Lends `body` a function that puts a row into `table`; `body` calls it
  /// with strictly ascending keys (bytewise).
  func putAscending(
    _ table: BulkTable,
    _ body: (_ put: (_ key: UnsafeRawBufferPointer, _ value: UnsafeRawBufferPointer) throws -> Void) throws -> Void
  ) throws
}

/// The derived tables a bulk import fills row by row (the stream heads and
/// the summary are a few rows, put as a command puts them).
package enum BulkTable: Sendable {
  case order, ids, streamEvents, checkpoints
}
