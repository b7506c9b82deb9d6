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
  /// How much a bulk load into a new database puts before it commits a
  /// piece: what its transaction holds in memory at most, besides LMDB's
  /// free pages kept for the next piece, and what the disk is handed to
  /// write while the next piece is made (`Environment.commitPiece`). At 16
  /// MiB a short import was one piece, all of it written and synced at
  /// the end; 1, 2 and 4 MiB all took 3–8 % off it (see
  /// docs/PERFORMANCE.md), 4 with the fewest commits.
  /// (A test lowers it for its own task, to commit many pieces in a small import.)
  @TaskLocal static var pieceBytes = 4 << 20

  func appendRecords(_ body: (_ append: (UInt64, UnsafeRawBufferPointer) throws -> Void) throws -> Void) throws {
    try loading(tables.events) { load in
      try body { seq, record in
        var key = seq.bigEndian
        try withUnsafeBytes(of: &key) { try load.put($0, record, flags: UInt32(MDB_APPEND)) }
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
    try loading(db) { load in
      // Decided at the first row: whether every row goes after the table's last key.
      var flags: UInt32? = nil
      try body { key, value in
        if flags == nil {
          let appends = try txn.withCursor(db) { try $0.last() }.map { Self.precedes($0.key, key) } ?? true
          flags = appends ? UInt32(MDB_APPEND) : 0
        }
        try load.put(key, value, flags: flags!)
      }
    }
  }

  /// Lends `body` a put through one cursor on `db`. In a new database's
  /// staging directory (`inPieces`), every `pieceBytes` the transaction is
  /// committed and the load goes on in the next with a new cursor
  /// (`Environment.commitPiece`) — unless another load's cursor is open
  /// around this one (a checkpoint put while events are appended): the
  /// outer one commits at its next row.
  private func loading(_ db: Database, _ body: (TableLoad) throws -> Void) throws {
    let load = TableLoad(self, db, cursor: try txn.openCursor(db), pieceBytes: Self.pieceBytes)
    loadingCursors += 1
    defer {
      load.cursor.close()
      loadingCursors -= 1
    }
    try body(load)
  }

  /// One table's rows put through a cursor (`loading`).
  final class TableLoad {
    let access: LMDBTables.LogTransaction
    let db: Database
    var cursor: Cursor
    let pieceBytes: Int

    init(_ access: LMDBTables.LogTransaction, _ db: Database, cursor: Cursor, pieceBytes: Int) {
      self.access = access
      self.db = db
      self.cursor = cursor
      self.pieceBytes = pieceBytes
    }

    func put(_ key: UnsafeRawBufferPointer, _ value: UnsafeRawBufferPointer, flags: UInt32) throws {
      try cursor.put(key, value, flags: flags)
      access.bytesInPiece += key.count + value.count
      guard access.inPieces, access.bytesInPiece >= pieceBytes, access.loadingCursors == 1 else { return }
      cursor.close()
      try access.tables.environment.commitPiece(access.txn)
      access.bytesInPiece = 0
      cursor = try access.txn.openCursor(db)
    }
  }

  /// Whether `a` sorts before `b` bytewise (LMDB's default key order).
  static func precedes(_ a: UnsafeRawBufferPointer, _ b: UnsafeRawBufferPointer) -> Bool {
    let common = min(a.count, b.count)
    let order = common == 0 ? 0 : memcmp(a.baseAddress!, b.baseAddress!, common)
    return order < 0 || (order == 0 && a.count < b.count)
  }
}
