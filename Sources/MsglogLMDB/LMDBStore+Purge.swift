import CLMDB
import MsglogCore

/// `msglog purge` on LMDB: what an erase (or a trim) left of a text in the
/// file, scrubbed in place while other processes go on reading and writing
/// (docs/REFERENCE.md, "Forgetting on purpose").
///
/// An erase rewrites its records through LMDB, which copies a page before
/// changing it: the page that held the text goes to the free list with the
/// text in it, and the page written in its place may keep a fragment of
/// the old value in its unused middle (LMDB writes a page whole, unused
/// bytes and all, and a changed or deleted node leaves its old bytes
/// there). So:
///
/// 1. **Rewrite the marked pages.** The write that changed or deleted an
///    entry marked its key (`LMDBTables.markForPurge`). The entry at each
///    mark (or the first after where it was) and the entries before and
///    after it are put again as they are, in one transaction of an
///    environment that has not written before: LMDB copies each of their
///    pages' used parts into a new page whose unused bytes are zeros (fresh
///    page buffers are zero-filled; only pages written in this transaction
///    are ever recycled into others). The neighbours cover a page that
///    split or merged since: the old bytes stay with the page, whichever
///    keys it holds now. The old pages go to the free list, and the marks
///    are cleared in the same transaction (a write that marks meanwhile
///    waits for it, and its marks stay for the next purge). Every entry of
///    every table is put again instead when a process wrote in more than
///    one transaction since the last purge (`noteReusedBuffers`: its pages
///    may carry old bytes anywhere), or the log's erases were written by
///    an older msglog (erase records, marks not complete).
/// 2. **Scrub every free page.** After one more small commit (LMDB keeps
///    the pages the last commit freed for a crash), a transaction takes
///    every free page it may reuse by storing one zero-filled value of a
///    page each in a scratch table, and commits: those pages are now zeros
///    on disk. The next transaction drops the scratch table, so the zeroed
///    pages are free again, and checks the free list: a page freed before
///    step 1 that is still listed was held by a reader's snapshot (another
///    process reading during the purge) and could not be taken; steps 2
///    run again once that reader has moved on, a few times at most.
///
/// Why not a compacting copy put in place of the file: the processes that
/// have the database open (`serve`, followers, writers) keep their map of
/// the old file and would write to it, losing their writes. Every step here
/// is an ordinary LMDB write transaction, so they see nothing but commits,
/// and `kill -9` at any point leaves a database LMDB opens as of its last
/// commit (a rerun of `purge` finishes the work: marks not cleared are
/// still there, and the free list is scrubbed whole every time). The cost:
/// the pages at the marks and the free list, not the database; the file
/// keeps its size (the free pages are reused by later writes).
///
/// What it cannot reach (docs/REFERENCE.md): LMDB reuses a process's page
/// buffers without clearing them, so a long-running writer (`serve`) that
/// had a text's page in memory may, after the purge, write stale bytes of
/// it into the unused middle of a page it writes for something else.
extension LMDBStore {
  /// The scratch table's name: step 2's, dropped by step 2 (and first
  /// thing, if a killed purge left it).
  static let purgeScratch = "purge-scratch"
  /// How many times step 2 runs before a reader that holds old pages is
  /// reported instead of waited for.
  static let purgeRounds = 8
  /// How many free pages one commit of step 2 takes.
  static let scrubPiece: UInt64 = 16384

  package func purge() throws -> UInt64? {
    guard let tables = try tablesThatHaveNotWritten() else {
      throw MsglogError.noDatabase(location: path, store: .lmdb, emptyDirectory: false)
    }
    let environment = tables.environment
    // A reader slot left by a killed process pins pages for ever: clear them.
    var dead: Int32 = 0
    mdb_reader_check(environment.env, &dead)
    let rewritten = try environment.write { txn -> UInt64 in
      try Self.dropScratch(in: txn)
      try Self.rewritePagesHoldingOldBytes(of: tables, in: txn)
      return UInt64(mdb_txn_id(txn.handle))
    }
    var scrubbed: UInt64 = 0
    for _ in 0..<Self.purgeRounds {
      // A commit of its own between: the pages the rewrite freed become reusable.
      try environment.write { txn in
        let scratch = try Self.scratch(in: txn, create: true)
        try txn.put(scratch, [0], [])  // (before every piece's key: they append)
      }
      // (LMDB reads its free list only in a read transaction: counted
      // just before; what commits meanwhile is checked for after.)
      let (pages, pageSize) = try environment.read { try Self.freePages(in: $0, freedBy: nil) }
      // One overflow page per value: the page size less its header. The
      // free list's reusable pages are taken first; past them the file
      // grows. In commits of `scrubPiece` pages: each reuses the page
      // buffers the one before used, where one commit would allocate a
      // buffer for every page.
      let zeros = [UInt8](repeating: 0, count: pageSize - 16)
      var taken: UInt64 = 0
      while taken < pages {
        let piece = taken..<min(pages, taken + Self.scrubPiece)
        try environment.write { txn in
          let scratch = try Self.scratch(in: txn, create: true)
          for n in piece {
            var key = n.bigEndian
            try withUnsafeBytes(of: &key) { key in
              try zeros.withUnsafeBytes { try txn.put(scratch, key, $0, flags: UInt32(MDB_APPEND)) }
            }
          }
        }
        taken = piece.upperBound
      }
      scrubbed += pages * UInt64(pageSize)
      try environment.write { txn in try Self.dropScratch(in: txn) }
      let left = try environment.read { try Self.freePages(in: $0, freedBy: rewritten).pages }
      if left == 0 { return scrubbed }
    }
    throw MsglogError.purgeHeldByReader(location: path)
  }

  /// Puts every entry of every table again, as it is (step 1, for a
  /// database whose marks are not complete).
  static func rewriteEveryEntry(in txn: Transaction) throws {
    var main: MDB_dbi = 0
    try check(mdb_dbi_open(txn.handle, nil, 0, &main), "mdb_dbi_open")
    var names: [String] = []
    try txn.withCursor(Database(dbi: main)) { cursor in
      var entry = try cursor.first()
      while let (key, _) = entry {
        names.append(String(decoding: key, as: UTF8.self))
        entry = try cursor.next()
      }
    }
    for name in names {
      var dbi: MDB_dbi = 0
      try check(mdb_dbi_open(txn.handle, name, 0, &dbi), "mdb_dbi_open")
      try txn.withCursor(Database(dbi: dbi)) { cursor in
        var entry = try cursor.first()
        while let (key, value) = entry {
          // Copied out: the put copies the page the bytes lie in.
          let k = Array(key)
          let v = Array(value)
          try k.withUnsafeBytes { k in
            try v.withUnsafeBytes { v in try cursor.put(k, v, flags: UInt32(MDB_CURRENT)) }
          }
          entry = try cursor.next()
        }
      }
    }
  }

  /// The free list's pages (LMDB's table 0: a freeing transaction's id →
  /// its pages), all of them or only those freed by transactions up to
  /// `freedBy`; and the page size.
  private static func freePages(in txn: Transaction, freedBy: UInt64?) throws -> (pages: UInt64, pageSize: Int) {
    var stat = MDB_stat()
    try check(mdb_env_stat(mdb_txn_env(txn.handle), &stat), "mdb_env_stat")
    var pages: UInt64 = 0
    try txn.withCursor(Database(dbi: 0)) { cursor in
      var entry = try cursor.first()
      while let (key, value) = entry {
        let freedIn = key.loadUnaligned(as: UInt64.self)
        if freedBy.map({ freedIn <= $0 }) ?? true { pages += value.loadUnaligned(as: UInt64.self) }
        entry = try cursor.next()
      }
    }
    return (pages, Int(stat.ms_psize))
  }

  private static func scratch(in txn: Transaction, create: Bool) throws -> Database {
    var dbi: MDB_dbi = 0
    try check(mdb_dbi_open(txn.handle, purgeScratch, create ? UInt32(MDB_CREATE) : 0, &dbi), "mdb_dbi_open")
    return Database(dbi: dbi)
  }

  private static func dropScratch(in txn: Transaction) throws {
    var dbi: MDB_dbi = 0
    let rc = mdb_dbi_open(txn.handle, purgeScratch, 0, &dbi)
    if rc == LMDBError.notFound { return }
    try check(rc, "mdb_dbi_open")
    try check(mdb_drop(txn.handle, dbi, 1), "mdb_drop")
  }
}
