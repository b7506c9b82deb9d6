import CLMDB
import Synchronization

#if canImport(Glibc)
  import Glibc
#endif

/// A named database inside an environment.
package struct Database: Sendable {
  let dbi: MDB_dbi
}

/// An open LMDB transaction, lent to a closure by `Environment.read`/`write`.
///
/// - Warning: valid only inside that closure. Values it lends point into the
///   memory map and are valid only until the transaction ends; copy them out.
package final class Transaction {
  private(set) var txn: OpaquePointer?
  package let isReadOnly: Bool
  /// The environment's lock on opening tables (`openTable`); nil for a
  /// transaction that opens none.
  private let tableOpening: TableOpeningLock?
  /// Whether this transaction holds `tableOpening`, until it ends.
  private var holdsTableOpening = false

  /// `PageBounds`' mask: a read's page size less one; 0, not checked.
  private let pageMask: Int

  /// `pageSize`: the map's (`Environment.mapPageSize`), by which a
  /// read-only transaction's values are checked to lie in their pages
  /// (`PageBounds`); a write's are not.
  init(_ txn: OpaquePointer, readOnly: Bool, pageSize: Int?, tableOpening: TableOpeningLock? = nil) {
    self.txn = txn
    self.isReadOnly = readOnly
    self.pageMask = PageBounds.mask(pageSize: readOnly ? pageSize : nil)
    self.tableOpening = tableOpening
  }

  /// Called by the environment when the transaction is over (committed or
  /// aborted): the tables it opened are the environment's, or closed.
  func invalidate() {
    txn = nil
    if holdsTableOpening {
      holdsTableOpening = false
      tableOpening?.unlock()
    }
  }

  /// Opens (and, in a writer, creates) a named table; nil when it does
  /// not exist and `create` is false. `sharing`: a table opened when first
  /// needed, whose handle every later transaction takes once this one has
  /// committed (`Environment.openedTable`).
  ///
  /// LMDB's rule (`TableOpeningLock`): the first call takes the
  /// environment's lock, held until this transaction ends, and a handle is
  /// shared only once its opener has committed. (Two readers opening
  /// `tokens` at once had one of them answered "invalid argument".) A
  /// transaction that does not know every table committed since it began
  /// must not open one — LMDB could give it a slot such a table has — nor
  /// use one: it throws `TableOpenedSince`, for the caller to run it again
  /// in a new transaction.
  package func openTable(_ name: String, create: Bool, sharing: Bool = false) throws -> Database? {
    if !holdsTableOpening, let tableOpening {
      tableOpening.lock()
      holdsTableOpening = true
      knowsEveryTable = tableOpening.committedSlots.allSatisfy { knows(Database(dbi: $0)) }
    }
    // Asked again at each call: a caller that swallowed the first refusal
    // must not open a table on it.
    guard knowsEveryTable else { throw TableOpenedSince() }
    var dbi: MDB_dbi = 0
    let rc = mdb_dbi_open(handle, name, create ? UInt32(MDB_CREATE) : 0, &dbi)
    if rc == LMDBError.notFound { return nil }
    try check(rc, "mdb_dbi_open")
    openedSlots.insert(dbi)
    if sharing { openedHere[name] = Database(dbi: dbi) }
    return Database(dbi: dbi)
  }

  /// Empties `db` and deletes it, its handle closed (`mdb_drop`).
  package func dropTable(_ db: Database) throws {
    try check(mdb_drop(handle, db.dbi, 1), "mdb_drop")
    // A slot closed here is none a later transaction must know.
    openedSlots.remove(db.dbi)
    if holdsTableOpening { tableOpening?.committedSlots.remove(db.dbi) }
  }

  /// Whether this transaction knew every table committed when it first
  /// opened one (`openTable`).
  private var knowsEveryTable = true
  /// The slots of the tables this transaction opened.
  private var openedSlots = TableSlots()
  /// The tables opened when first needed that this transaction opened.
  private var openedHere: [String: Database] = [:]

  /// A table opened when first needed by this transaction, not committed yet.
  func openedTable(_ name: String) -> Database? { openedHere[name] }

  /// Called by the environment once this transaction has committed, before
  /// it ends (and lets go of the lock): the tables it opened are every
  /// later transaction's.
  func publishOpenedTables() {
    guard !openedSlots.isEmpty, let tableOpening else { return }
    tableOpening.committedSlots.formUnion(openedSlots)
    openedSlots = TableSlots()
    if !openedHere.isEmpty {
      tableOpening.published.withLock { $0.merge(openedHere) { old, _ in old } }
      openedHere = [:]
    }
  }

  /// Whether a named table `name` exists in this transaction's snapshot:
  /// its name is a key of the unnamed table.
  package func hasTable(_ name: String) throws -> Bool {
    try get(try mainDatabase(), Array(name.utf8)) { _ in true } ?? false
  }

  /// The unnamed table, whose keys are the names of the named ones (no
  /// slot of its own to open: LMDB's `MAIN_DBI`).
  package func mainDatabase() throws -> Database {
    var dbi: MDB_dbi = 0
    try check(mdb_dbi_open(handle, nil, 0, &dbi), "mdb_dbi_open")
    return Database(dbi: dbi)
  }

  /// Whether `db`, a handle opened by another transaction, is one this
  /// transaction may use: false when it was opened after this one began
  /// (LMDB answers "invalid argument" for it here).
  package func knows(_ db: Database) -> Bool {
    var flags: UInt32 = 0
    return mdb_dbi_flags(handle, db.dbi, &flags) == 0
  }

  /// Not yet committed, aborted or over.
  var isOpen: Bool { txn != nil }

  /// Whether part of this write was already committed (`Environment.commitPiece`):
  /// it can no longer be rolled back and run again whole.
  private(set) var committedPieces = false

  /// Goes on in `txn`, begun after the one this was committed (`Environment.commitPiece`).
  func continuePiecewise(in txn: OpaquePointer) {
    self.txn = txn
    committedPieces = true
  }

  var handle: OpaquePointer {
    guard let txn else { preconditionFailure("a transaction was used after its closure returned") }
    return txn
  }

  /// Lends the value stored under `key` to `body`; nil when there is none.
  package func get<R>(
    _ db: Database, _ key: UnsafeRawBufferPointer, _ body: (UnsafeRawBufferPointer) throws -> R
  ) throws -> R? {
    var k = MDB_val(mv_size: key.count, mv_data: UnsafeMutableRawPointer(mutating: key.baseAddress))
    var v = MDB_val()
    let rc = mdb_get(handle, db.dbi, &k, &v)
    if rc == LMDBError.notFound { return nil }
    try check(rc, "mdb_get")
    try PageBounds.check(v, mask: pageMask, "mdb_get")
    return try body(UnsafeRawBufferPointer(start: v.mv_data, count: v.mv_size))
  }

  package func get<R>(_ db: Database, _ key: [UInt8], _ body: (UnsafeRawBufferPointer) throws -> R) throws -> R? {
    try key.withUnsafeBytes { try get(db, $0, body) }
  }

  /// Stores `value` under `key`; `flags` as for `mdb_put` (`MDB_APPEND`, …).
  package func put(_ db: Database, _ key: UnsafeRawBufferPointer, _ value: UnsafeRawBufferPointer, flags: UInt32 = 0)
    throws
  {
    precondition(!isReadOnly, "put in a read-only transaction")
    var k = MDB_val(mv_size: key.count, mv_data: UnsafeMutableRawPointer(mutating: key.baseAddress))
    var v = MDB_val(mv_size: value.count, mv_data: UnsafeMutableRawPointer(mutating: value.baseAddress))
    try check(mdb_put(handle, db.dbi, &k, &v, flags), "mdb_put")
  }

  package func put(_ db: Database, _ key: [UInt8], _ value: [UInt8], flags: UInt32 = 0) throws {
    try key.withUnsafeBytes { k in try value.withUnsafeBytes { v in try put(db, k, v, flags: flags) } }
  }

  /// Deletes `key`; returns false when it was not there.
  @discardableResult
  package func delete(_ db: Database, _ key: [UInt8]) throws -> Bool {
    try key.withUnsafeBytes { key in
      var k = MDB_val(mv_size: key.count, mv_data: UnsafeMutableRawPointer(mutating: key.baseAddress))
      let rc = mdb_del(handle, db.dbi, &k, nil)
      if rc == LMDBError.notFound { return false }
      try check(rc, "mdb_del")
      return true
    }
  }

  /// Deletes every entry of `db` (the database itself stays).
  package func empty(_ db: Database) throws {
    precondition(!isReadOnly, "empty in a read-only transaction")
    try check(mdb_drop(handle, db.dbi, 0), "mdb_drop")
  }

  /// How many entries `db` holds: O(1), from the database's own header.
  package func entries(_ db: Database) throws -> UInt64 {
    var stat = MDB_stat()
    try check(mdb_stat(handle, db.dbi, &stat), "mdb_stat")
    return UInt64(stat.ms_entries)
  }

  /// How many entries `db` holds and the bytes of its pages: O(1).
  package func size(_ db: Database) throws -> (entries: UInt64, bytes: UInt64) {
    var stat = MDB_stat()
    try check(mdb_stat(handle, db.dbi, &stat), "mdb_stat")
    let pages = UInt64(stat.ms_branch_pages) + UInt64(stat.ms_leaf_pages) + UInt64(stat.ms_overflow_pages)
    return (UInt64(stat.ms_entries), pages * UInt64(stat.ms_psize))
  }

  /// Opens a cursor on `db`, which the caller closes (`Cursor.close`)
  /// before the transaction ends.
  package func openCursor(_ db: Database) throws -> Cursor {
    var cursor: OpaquePointer?
    try check(mdb_cursor_open(handle, db.dbi, &cursor), "mdb_cursor_open")
    return Cursor(cursor!, pageMask: pageMask)
  }

  /// Opens a cursor on `db` for the duration of `body`.
  package func withCursor<R>(_ db: Database, _ body: (Cursor) throws -> R) throws -> R {
    var cursor: OpaquePointer?
    try check(mdb_cursor_open(handle, db.dbi, &cursor), "mdb_cursor_open")
    let c = Cursor(cursor!, pageMask: pageMask)
    defer {
      mdb_cursor_close(cursor)
      c.invalidate()
    }
    return try body(c)
  }
}

/// A position in a named database, moved with `first`, `next`, `seek`, `last`.
///
/// - Warning: valid only inside `Transaction.withCursor`; the key and value
///   buffers it returns are valid until the next move or the end of the
///   transaction.
package final class Cursor {
  private var cursor: OpaquePointer?
  /// Its transaction's `PageBounds` mask.
  private let pageMask: Int

  init(_ cursor: OpaquePointer, pageMask: Int) {
    self.cursor = cursor
    self.pageMask = pageMask
  }

  func invalidate() { cursor = nil }

  /// Closes a cursor from `Transaction.openCursor`.
  package func close() {
    mdb_cursor_close(cursor)
    cursor = nil
  }

  package typealias Entry = (key: UnsafeRawBufferPointer, value: UnsafeRawBufferPointer)

  // Inlined into every loop of moves, as it was before the check.
  @inline(__always)
  private func move(_ op: MDB_cursor_op, key: UnsafeRawBufferPointer? = nil) throws -> Entry? {
    guard let cursor else { preconditionFailure("a cursor was used after its closure returned") }
    var k = MDB_val(mv_size: key?.count ?? 0, mv_data: UnsafeMutableRawPointer(mutating: key?.baseAddress))
    var v = MDB_val()
    let rc = mdb_cursor_get(cursor, &k, &v, op)
    if rc == LMDBError.notFound { return nil }
    try check(rc, "mdb_cursor_get")
    try PageBounds.check(v, mask: pageMask, "mdb_cursor_get")
    return (
      UnsafeRawBufferPointer(start: k.mv_data, count: k.mv_size),
      UnsafeRawBufferPointer(start: v.mv_data, count: v.mv_size)
    )
  }

  @inline(__always) package func first() throws -> Entry? { try move(MDB_FIRST) }
  @inline(__always) package func last() throws -> Entry? { try move(MDB_LAST) }
  @inline(__always) package func next() throws -> Entry? { try move(MDB_NEXT) }
  @inline(__always) package func previous() throws -> Entry? { try move(MDB_PREV) }

  /// Deletes the entry the cursor is on. Where it stands then is LMDB's
  /// business (a page merged away leaves it unset): seek again.
  package func delete() throws {
    guard let cursor else { preconditionFailure("a cursor was used after its closure returned") }
    try check(mdb_cursor_del(cursor, 0), "mdb_cursor_del")
  }

  /// The first entry whose key is at or after `key`.
  package func seek(_ key: [UInt8]) throws -> Entry? {
    try key.withUnsafeBytes { try move(MDB_SET_RANGE, key: $0) }
  }

  /// The first entry whose key is at or after the seq `seq` (an `events`
  /// key), without making an array of the key.
  package func seek(seq: UInt64) throws -> Entry? {
    var key = seq.bigEndian
    return try withUnsafeBytes(of: &key) { try move(MDB_SET_RANGE, key: $0) }
  }

  /// Stores `value` under `key`; `flags` as for `mdb_cursor_put`. With
  /// `MDB_APPEND` (the key must follow every other), a run of puts through
  /// one cursor adds each row at the end without searching the tree.
  package func put(_ key: UnsafeRawBufferPointer, _ value: UnsafeRawBufferPointer, flags: UInt32 = 0) throws {
    guard let cursor else { preconditionFailure("a cursor was used after its closure returned") }
    var k = MDB_val(mv_size: key.count, mv_data: UnsafeMutableRawPointer(mutating: key.baseAddress))
    var v = MDB_val(mv_size: value.count, mv_data: UnsafeMutableRawPointer(mutating: value.baseAddress))
    try check(mdb_cursor_put(cursor, &k, &v, flags), "mdb_cursor_put")
  }
}

/// Whether a value LMDB lends from a read-only transaction lies inside
/// its page, as it must: LMDB takes a node's sizes from the page as they
/// are, and a flipped bit in one (damage) lent a value running past the
/// end of the map — `verify`, `export` and `list` ended with SIGSEGV and
/// no word. Such a size is LMDB's "page corrupted" (`.damagedPages`).
///
/// In a read-only transaction every page is the map's, each at a multiple
/// of the page size from the map's page-aligned start, so where a value
/// starts tells its page. A value at the head of a page, just past its
/// header, is a large one on overflow pages, which the header counts.
/// A write transaction's changed pages are LMDB's own copies, anywhere in
/// memory: not checked (a write on a damaged file can still fault). Nor
/// are keys: at most 64 KiB long, one that runs off its page lands in the
/// map (read past the file's end, it faults as a file cut short, SIGBUS,
/// and says so), unless its page is within 64 KiB of the map's end.
enum PageBounds {
  /// LMDB's page header: `mp_pgno`, `mp_pad`, `mp_flags`, `mp_pages` (or `mp_lower`, `mp_upper`).
  static let headerSize = 16
  static let overflowFlag: UInt16 = 0x04

  /// The mask for a transaction: its page size less one, or 0 for one
  /// whose values are not checked (a write's).
  static func mask(pageSize: Int?) -> Int { pageSize.map { $0 - 1 } ?? 0 }

  /// Six instructions for a value inside the page it starts in: one per
  /// record of a replay. (With mask 0 only a value of at most a byte
  /// passes here; `checkLarge` lets the others through.)
  @inline(__always)
  static func check(_ val: MDB_val, mask: Int, _ function: @autoclosure () -> String) throws(LMDBError) {
    let offset = Int(bitPattern: UInt(bitPattern: val.mv_data)) & mask
    if offset &+ val.mv_size <= mask &+ 1 { return }
    try checkLarge(val, offset: offset, mask: mask, function())
  }

  @inline(never)
  static func checkLarge(_ val: MDB_val, offset: Int, mask: Int, _ function: String) throws(LMDBError) {
    guard mask != 0 else { return }
    let pageSize = mask + 1
    if offset == headerSize, let data = val.mv_data {
      let header = UnsafeRawPointer(data) - headerSize
      let flags = header.loadUnaligned(fromByteOffset: 10, as: UInt16.self)
      let pages = header.loadUnaligned(fromByteOffset: 12, as: UInt32.self)
      if flags & overflowFlag != 0, val.mv_size <= Int(pages) * pageSize - headerSize { return }
    }
    throw LMDBError(LMDBError.corrupted, function)
  }
}
