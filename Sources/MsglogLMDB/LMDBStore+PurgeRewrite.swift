import CLMDB
import MsglogCore

/// Step 1 of `purge` (`LMDBStore+Purge`): the pages that may hold old
/// bytes in their unused middle, copied into clean ones.
extension LMDBStore {
  /// Rewrites the pages at the purge marks (or every page: when the marks
  /// are not complete and the log may hold an older msglog's erases), then
  /// clears the marks and says they are complete.
  ///
  /// The key `[2]` (a process wrote in more than one transaction since)
  /// is not read: what it stood for, old bytes anywhere in the unused
  /// middle of pages, the gap scan of step 2 finds and zeroes in every
  /// page in use (`dirtyGaps`). msglog still writes it, for an older
  /// msglog's purge, which copies every page then.
  static func rewritePagesHoldingOldBytes(of tables: LMDBTables, in txn: Transaction) throws {
    let marks = try LMDBTables.purgeMarks(in: txn, create: true)!
    let complete = try txn.get(marks, LMDBTables.marksCompleteKey) { _ in true } ?? false
    if !complete, try mayHoldUnmarkedErases(tables, in: txn) {
      try rewriteEveryEntry(in: txn)
    } else {
      try rewriteAroundMarks(marks, in: txn)
    }
    try txn.empty(marks)
    try LMDBTables.startPurgeMarks(in: txn)
  }

  /// Whether an erase may have been written by an msglog that marked
  /// nothing: the container has reached the erases' version.
  private static func mayHoldUnmarkedErases(_ tables: LMDBTables, in txn: Transaction) throws -> Bool {
    let format = try txn.get(tables.meta, LMDBTables.formatKey) { String(decoding: $0, as: UTF8.self) }
    let version = try LMDBTables.containerFormat.version(of: format, location: tables.shown) ?? 0
    return version >= LMDBTables.erasedVersion
  }

  /// Copies, for each mark, the page that holds its key (or the first key
  /// after where it was) and, unless the mark says its page alone, the
  /// page before it: a page that split in the write that marked keeps its
  /// old bytes with its left half, while the marked key may have moved to
  /// the new right half. (A later write that
  /// copies a page copies its used parts only, leaving the old bytes
  /// behind on the free list.)
  private static func rewriteAroundMarks(_ marks: Database, in txn: Transaction) throws {
    // Read first: the puts below must not move a cursor on the marks.
    var found: [(table: String, key: [UInt8], pageAlone: Bool)] = []
    try txn.withCursor(marks) { cursor in
      var entry = try cursor.first()
      while let (mark, value) = entry {
        if let split = mark.firstIndex(of: 0), split > 0 {
          found.append(
            (
              String(decoding: mark[..<split], as: UTF8.self), Array(mark[(split + 1)...]),
              value.elementsEqual(LMDBTables.markPageAlone)
            ))
        }
        entry = try cursor.next()
      }
    }
    var stat = MDB_stat()
    try check(mdb_env_stat(mdb_txn_env(txn.handle), &stat), "mdb_env_stat")
    // Planned before any put, while every page is still in the map: an
    // entry's key lies in its page, and the map's pages are page-aligned.
    var opened: [String: Database?] = [:]
    var planned: [(Database, [UInt8])] = []
    for (name, key, pageAlone) in found {
      if opened[name] == nil { opened[name] = try openExisting(name, in: txn) }
      // A table gone since (a sync table dropped) left its pages to the free list.
      guard let table = opened[name]!, !key.isEmpty else { continue }
      let keys = try txn.withCursor(table) { cursor in
        try entriesOfPages(around: key, with: cursor, pageSize: UInt(stat.ms_psize), pageBefore: !pageAlone)
      }
      planned += keys.map { (table, $0) }
    }
    for (table, key) in planned {
      try txn.withCursor(table) { cursor in
        if let entry = try cursor.seek(key) { try putAgain(entry, with: cursor) }
      }
    }
  }

  /// One key of the page holding `key` (or the first key after it; the
  /// last one when there is none) and, with `pageBefore`, one of the page
  /// before.
  private static func entriesOfPages(
    around key: [UInt8], with cursor: Cursor, pageSize: UInt, pageBefore: Bool
  ) throws -> [[UInt8]] {
    func page(_ entry: Cursor.Entry) -> UInt { UInt(bitPattern: entry.key.baseAddress) / pageSize }
    guard let at = try cursor.seek(key) ?? cursor.last() else { return [] }
    let home = page(at)
    var keys = [Array(at.key)]
    guard pageBefore else { return keys }
    var entry = try cursor.previous()
    while let before = entry, page(before) == home { entry = try cursor.previous() }
    if let before = entry { keys.append(Array(before.key)) }
    return keys
  }

  /// Puts the entry the cursor is at again, as it is: LMDB copies its page.
  private static func putAgain(_ entry: Cursor.Entry, with cursor: Cursor) throws {
    // Copied out: the put copies the page the bytes lie in.
    let key = Array(entry.key)
    let value = Array(entry.value)
    try key.withUnsafeBytes { k in
      try value.withUnsafeBytes { v in try cursor.put(k, v, flags: UInt32(MDB_CURRENT)) }
    }
  }

  private static func openExisting(_ name: String, in txn: Transaction) throws -> Database? {
    var dbi: MDB_dbi = 0
    let rc = mdb_dbi_open(txn.handle, name, 0, &dbi)
    if rc == LMDBError.notFound { return nil }
    try check(rc, "mdb_dbi_open")
    return Database(dbi: dbi)
  }
}
