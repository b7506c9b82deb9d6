import CLMDB
import MsglogCore

/// Where an older msglog's `purge` must look: the places of the file a
/// deletion or a rewrite may have left old bytes in, recorded by the write
/// that made them (docs/FORMAT.md, "Purge marks"). This msglog's purge
/// does not read them (it finds every such place by reading the file:
/// `LMDBStore.dirtyGaps`) and only clears them; they are written still so
/// that an older msglog's purge of the same database misses nothing.
///
/// LMDB copies a page before changing it, so the old version goes to the
/// free list (which purge scrubs whole); but the new version is written
/// with whatever its unused middle holds, and a node deleted or shrunk
/// there leaves its old bytes in that middle (LMDB moves the other nodes
/// over it and clears nothing). The write that changes or deletes the
/// entry marks its key, and an older purge copies the page at each mark
/// (and the page before it). (An erase that is its process's first write
/// marks nothing when it could zero the record first: `replaceRecord`.) A
/// page can also carry old bytes from the page buffer it was built in:
/// LMDB reuses a process's buffers, uncleared, from one write transaction
/// to the next. A process's first write has clean buffers; a later one
/// says so once (`noteReusedBuffers`), and an older purge copies every
/// page.
///
/// The table `purge-marks`: key = the table's name, a 0 byte, the entry's
/// key; value empty, or `[1]` when the page alone needs copying. Key `[0]`
/// (before every name) says the marks are complete: every write that left
/// old bytes since the last purge marked them. Key `[2]` says a process
/// wrote in more than one transaction since. A database made by this
/// msglog has `[0]` from the first; one whose erases an older msglog wrote
/// (they marked nothing) gets it from its next purge, which rewrites the
/// whole database once. The table is one of LMDB's named databases: an
/// older msglog of the same container version never opens it (its purge
/// rewrites it with everything else), so the container's version stays.
extension LMDBTables {
  static let purgeMarksTable = "purge-marks"
  /// The entry saying the marks are complete.
  static let marksCompleteKey: [UInt8] = [0]

  /// Records that the entry `key` of `table` was just changed or deleted
  /// in `txn`, leaving old bytes in its page for `msglog purge` to clear.
  ///
  /// Call it from the write transaction that deletes or rewrites an entry
  /// whose old bytes must not outlive a purge (an erase blanking a record,
  /// a trim deleting rows). For a deleted range, mark its first and last
  /// keys: the pages wholly emptied go to the free list, which purge
  /// scrubs anyway; the pages at the range's ends keep neighbours. An
  /// older msglog's purge copies the page holding the key (or the first
  /// key after it) and the page before it, where a page that split keeps
  /// the old bytes when the key moved on to its new right half. Marking a
  /// key twice is one mark.
  ///
  /// - Parameters:
  ///   - table: one of this log's tables (`events`, `heads`, `order`,
  ///     `ids`, `stream-events`, `checkpoints`, `meta`, sync's, `tokens`).
  ///   - pageAlone: the write cannot have split the key's page (a value
  ///     rewritten no longer than it was: LMDB changes it within its page),
  ///     so purge need not copy the page before.
  package func markForPurge(_ table: Database, key: [UInt8], in txn: Transaction, pageAlone: Bool = false) throws {
    guard let name = name(of: table, in: txn) else {
      preconditionFailure("a purge mark for a table this log does not name")
    }
    let marks = try Self.purgeMarks(in: txn, create: true)!
    let mark = Array(name.utf8) + [0] + key
    // A mark asking for the page before keeps asking.
    if pageAlone, try txn.get(marks, mark, { $0.isEmpty }) == true { return }
    try txn.put(marks, mark, pageAlone ? Self.markPageAlone : [])
  }

  /// The entry saying a process wrote in more than one transaction since
  /// the last purge (`noteReusedBuffers`).
  static let reusedBuffersKey: [UInt8] = [2]

  /// Says, once per process, that this process writes again: LMDB reuses
  /// the page buffers of its earlier writes without clearing them, so a
  /// page it writes may carry, in its unused middle, bytes of any page it
  /// wrote or changed before (a text erased since, say) — places no mark
  /// names. An older msglog's purge then copies every page; this one's gap
  /// scan finds those places by itself.
  /// (A bulk load's pieces, which only a new database's staging sees, are
  /// one write here.)
  func noteReusedBuffers(in txn: Transaction) throws {
    try markWholeForPurge(in: txn)
  }

  /// Records that `txn` may have left old bytes anywhere, so that an older
  /// msglog's `purge` copies every page (key `[2]`; this one's gap scan
  /// reads every page anyway).
  ///
  /// For a write that deletes much (a trim): LMDB reuses a page its
  /// deletes emptied, with the deleted entries still in it, for the next
  /// page the same transaction writes, of any table — a place no mark on
  /// the deleted keys names.
  package func markWholeForPurge(in txn: Transaction) throws {
    try txn.put(try Self.purgeMarks(in: txn, create: true)!, Self.reusedBuffersKey, [])
  }

  /// The entry holding the id of the last purge's first transaction (8
  /// bytes, big-endian), which emptied this table: a process's page
  /// buffers filled before it may hold bytes that purge scrubbed from the
  /// file (`checkBuffers`).
  static let lastPurgeKey: [UInt8] = [3]

  /// Notes, in the purge's first transaction, that a purge begins.
  static func notePurge(in txn: Transaction) throws {
    try txn.put(
      try purgeMarks(in: txn, create: true)!, lastPurgeKey, [UInt8](bigEndian: UInt64(mdb_txn_id(txn.handle))))
  }

  /// The id of the last purge's first transaction; nil when there was none
  /// (or an older msglog's, which notes none).
  static func lastPurge(in txn: Transaction) throws -> Int? {
    guard let marks = try purgeMarks(in: txn, create: false) else { return nil }
    return try txn.get(marks, lastPurgeKey) { bytes in
      bytes.count == 8 ? Int(truncatingIfNeeded: bytes.loadBigEndian(as: UInt64.self)) : nil
    } ?? nil
  }

  /// Refuses a write whose page buffers were filled before a purge that
  /// committed since (`BuffersPredatePurge`): LMDB reuses a process's
  /// buffers uncleared, and would carry bytes that purge scrubbed (a text
  /// erased since) into the unused middle of the pages this write makes.
  /// A process's first write has clean buffers and is let through.
  /// (A purge's id past this transaction's is another file's history —
  /// a compacting copy numbers its transactions from 1 again — and says
  /// nothing of these buffers.)
  func checkBuffers(in txn: Transaction) throws {
    guard environment.hasWritten, let purge = try Self.lastPurge(in: txn), purge > environment.buffersSince,
      purge < mdb_txn_id(txn.handle)
    else { return }
    throw BuffersPredatePurge(environment: environment.opening, purge: purge)
  }

  /// A mark's value: empty, the page and the page before; this, the page alone.
  static let markPageAlone: [UInt8] = [1]

  /// The name of one of this log's tables, found by its handle: one of
  /// the log's own, or one opened when first needed (by `txn`, or by a
  /// transaction that committed) — never by opening anything here.
  private func name(of table: Database, in txn: Transaction) -> String? {
    let log: [(Database, String)] = [
      (events, "events"), (heads, "heads"), (order, "order"), (ids, "ids"), (streamEvents, "stream-events"),
      (checkpoints, "checkpoints"), (meta, "meta"),
    ]
    if let (_, name) = log.first(where: { $0.0.dbi == table.dbi }) { return name }
    return ([Self.tokensTable] + SyncTable.allCases.map(\.rawValue)).first { name in
      (txn.openedTable(name) ?? environment.openedTable(name))?.dbi == table.dbi
    }
  }

  /// The marks table; nil when it does not exist and `create` is false.
  static func purgeMarks(in txn: Transaction, create: Bool) throws -> Database? {
    try txn.openTable(purgeMarksTable, create: create)
  }

  /// Makes the marks table of a new database, complete from the first.
  static func startPurgeMarks(in txn: Transaction) throws {
    try txn.put(try purgeMarks(in: txn, create: true)!, marksCompleteKey, [])
  }
}

extension LMDBTables.LogTransaction {
  /// `LMDBTables.markForPurge` in this transaction.
  func markForPurge(_ table: Database, key: [UInt8], pageAlone: Bool = false) throws {
    try tables.markForPurge(table, key: key, in: txn, pageAlone: pageAlone)
  }
}

/// A write found its process's page buffers older than a purge
/// (`LMDBTables.checkBuffers`): nothing was written; the store opens the
/// environment afresh and writes again (`LMDBStore.write`).
struct BuffersPredatePurge: Error {
  /// The environment whose buffers they are (`Environment.opening`; not
  /// held: it must close).
  let environment: Int
  /// The purge's first transaction.
  let purge: Int
}
