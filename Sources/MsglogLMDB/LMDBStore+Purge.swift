import CLMDB
import MsglogCore

#if canImport(Glibc)
  import Glibc
#endif

/// `msglog purge` on LMDB: what an erase (or a trim) left of a text in the
/// file, scrubbed in place while other processes go on reading and writing
/// (docs/REFERENCE.md, "Forgetting on purpose").
///
/// An erase rewrites its records through LMDB, which copies a page before
/// changing it: the page that held the text goes to the free list with the
/// text in it. The page written in its place holds none of it when the
/// erase is its process's first write: it overwrites each record with
/// zeros of its length before blanking it (`replaceRecord`). Otherwise (a
/// process that wrote before: LMDB reuses its page buffers uncleared; a
/// record whose page the same write had changed already) the new page may
/// keep a fragment of the old value in its unused middle (LMDB writes a
/// page whole, unused bytes and all, and a changed or deleted node leaves
/// its old bytes there), and the write marks its key. So:
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
///    an older msglog (erase records, marks not complete). After an erase
///    by a new process (`msglog erase`) there are no marks: nothing to do.
/// 2. **Scrub every free page.** After one more small commit (LMDB hands
///    out the pages a commit freed only after another commit), a write
///    transaction that changes nothing overwrites with zeros, straight in
///    the data file, every free page LMDB would hand it (`scrubFreePages`,
///    which says why that is safe), skipping those that read zeros already
///    (scrubbed by an earlier purge and not reused since), in long runs
///    that rewrite the few pages in use between free ones as they are, and
///    syncs the file. A page freed by step 1 or before that a reader's snapshot still
///    sees (another process reading during the purge) is left alone; step
///    2 runs again, after a short wait, once that reader has moved on, a
///    few times at most, then purge says what held it.
///
/// Why not a compacting copy put in place of the file: the processes that
/// have the database open (`serve`, followers, writers) keep their map of
/// the old file and would write to it, losing their writes. Step 1 is an
/// ordinary LMDB write transaction and step 2 writes only pages no tree
/// and no snapshot references, so they see nothing but commits, and
/// `kill -9` at any point leaves a database LMDB opens as of its last
/// commit (a rerun of `purge` finishes the work: marks not cleared are
/// still there, and the free list is scrubbed whole every time). The cost:
/// the pages at the marks and the free pages not yet zero, not the
/// database; the file keeps its size (the free pages are reused by later
/// writes).
///
/// What it cannot reach (docs/REFERENCE.md): LMDB reuses a process's page
/// buffers without clearing them, so a long-running writer (`serve`) that
/// had a text's page in memory may, after the purge, write stale bytes of
/// it into the unused middle of a page it writes for something else.
extension LMDBStore {
  /// The scratch table's name: an older msglog's step 2 filled it with
  /// zero pages; dropped first thing, if a killed purge left it.
  static let purgeScratch = "purge-scratch"
  /// How many times step 2 runs before a reader that holds old pages is
  /// reported instead of waited for.
  static let purgeRounds = 8

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
    // A commit of its own between: LMDB hands out the pages a commit freed
    // only once another has followed it, and step 2 takes what LMDB would.
    // (The marks' first entry put again as it is: a page changed, nothing
    // else; the pages this frees hold table names and page numbers.)
    try environment.write { txn in
      try txn.put(try LMDBTables.purgeMarks(in: txn, create: true)!, LMDBTables.marksCompleteKey, [])
    }
    var scrubbed: UInt64 = 0
    var wait: UInt32 = 5_000
    for round in 0..<Self.purgeRounds {
      // Changes nothing: LMDB commits it without writing.
      let (bytes, held) = try environment.write { try Self.scrubFreePages(in: $0, of: environment, freedBy: rewritten, scanGaps: round == 0) }
      scrubbed += bytes
      if !held { return scrubbed }
      // A reader's snapshot still sees pages the rewrite (or an erase
      // before it) freed: once it moves on they are free to take.
      if round + 1 < Self.purgeRounds { usleep(wait) }
      wait *= 2
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

  private static func dropScratch(in txn: Transaction) throws {
    var dbi: MDB_dbi = 0
    let rc = mdb_dbi_open(txn.handle, purgeScratch, 0, &dbi)
    if rc == LMDBError.notFound { return }
    try check(rc, "mdb_dbi_open")
    try check(mdb_drop(txn.handle, dbi, 1), "mdb_drop")
  }
}
