import CLMDB
import MsglogCore

#if canImport(Glibc)
  import Glibc
#endif

/// A bulk import's rows, table by table in key order: each table is
/// appended (`MDB_APPEND`) through one cursor when its rows all come after
/// the keys it already holds (always, in an empty database), and put in
/// order through that cursor otherwise.
extension LMDBTables.LogTransaction: BulkLoading {
  func appendRecords(_ body: (_ append: (UInt64, UnsafeRawBufferPointer) throws -> Void) throws -> Void) throws {
    try txn.withCursor(tables.events) { cursor in
      try body { seq, record in
        var key = seq.bigEndian
        try withUnsafeBytes(of: &key) { try cursor.put($0, record, flags: UInt32(MDB_APPEND)) }
      }
    }
  }

  func putAscending(
    _ table: BulkTable,
    _ body: (_ put: (_ key: UnsafeRawBufferPointer, _ value: UnsafeRawBufferPointer) throws -> Void) throws -> Void
  ) throws {
    let db: Database
    switch table {
    case .order: db = tables.order
    case .ids: db = tables.ids
    case .streamEvents: db = tables.streamEvents
    case .checkpoints: db = tables.checkpoints
    }
    try txn.withCursor(db) { cursor in
      // Decided at the first row: whether every row goes after the table's last key.
      var flags: UInt32? = nil
      try body { key, value in
        if flags == nil {
          let appends = try cursor.last().map { Self.precedes($0.key, key) } ?? true
          flags = appends ? UInt32(MDB_APPEND) : 0
        }
        try cursor.put(key, value, flags: flags!)
      }
    }
  }

  /// Whether `a` sorts before `b` bytewise (LMDB's default key order).
  static func precedes(_ a: UnsafeRawBufferPointer, _ b: UnsafeRawBufferPointer) -> Bool {
    let common = min(a.count, b.count)
    let order = common == 0 ? 0 : memcmp(a.baseAddress!, b.baseAddress!, common)
    return order < 0 || (order == 0 && a.count < b.count)
  }
}
