import CLMDB
import MsglogCore

#if canImport(Glibc)
  import Glibc
#endif

/// `msglog purge` on LMDB: what an erase (or a trim) left of a text in the
/// file, scrubbed in place while other processes go on reading and writing
/// (docs/REFERENCE.md, "Forgetting on purpose").
///
/// Where old bytes of a text can be, in an LMDB file: LMDB copies a page
/// before changing it, so the page that held the text goes to the free
/// list with the text in it; and it builds every page it writes in a
/// buffer it writes whole, unused middle (between the node pointers and
/// the nodes) and all — a deleted or shrunk node leaves its old bytes
/// there, a buffer reused from an earlier transaction of the same process
/// (LMDB clears none) keeps whatever page it held, and a copied page keeps
/// the old page's unused middle at its ends. So old bytes lie in free
/// pages, and in the unused middle of pages in use, of any table, written
/// by any process that wrote more than once (`serve`, an `import`
/// committing in pieces, another LMDB writer).
///
/// 1. **Clear the purge marks.** Writes marked where they left old bytes
///    (`LMDBTables.markForPurge`, docs/FORMAT.md "Purge marks"); this
///    msglog's purge finds those places by itself (step 2) and only
///    empties the table, writing `[0]` (the marks are complete) again, for
///    an older msglog's purge, which copies the marked pages. One more
///    small commit follows: LMDB hands out the pages a commit freed only
///    once another has followed it, and step 2 takes what LMDB would (the
///    erase's freed pages when purge runs right after it).
/// 2. **Scrub.** A write transaction that changes nothing (LMDB commits it
///    without writing) overwrites with zeros, straight in the data file,
///    every free page LMDB would hand it (`scrubFreePages`, which says why
///    that is safe), skipping those that read zeros already (scrubbed by
///    an earlier purge and not reused since), in long runs that rewrite
///    the few pages in use between free ones as they are; and it reads
///    every page in use and zeroes its unused middle where that is not
///    zeros (the gap scan, `dirtyGaps`, which says why that is safe); then
///    syncs the file. A page freed by step 1 or before that a reader's
///    snapshot still sees (another process reading during the purge) is
///    left alone; the scrub runs again, after a short wait, once that
///    reader has moved on, a few times at most, then purge says what held it.
///
/// Why not a compacting copy put in place of the file: the processes that
/// have the database open (`serve`, followers, writers) keep their map of
/// the old file and would write to it, losing their writes. Step 1 is an
/// ordinary LMDB write transaction and step 2 writes only pages no tree
/// and no snapshot references, and bytes of pages in use no reader reads,
/// so they see nothing but commits, and `kill -9` at any point leaves a
/// database LMDB opens as of its last commit (a rerun of `purge` does the
/// rest: the free list and the pages in use are read whole every time).
/// The cost: reading the file once, writing the free pages not yet zero
/// and the unused middles not zero; the file keeps its size (the free
/// pages are reused by later writes).
///
/// A process that keeps writing (`serve`) keeps its page buffers, which
/// may hold a page it had before the purge (a text's, erased since): step
/// 1 notes the purge's transaction (`LMDBTables.notePurge`), and that
/// process's next write opens the environment afresh before it writes
/// (`LMDBStore.openAfresh`), so that LMDB carries none of it into the file.
extension LMDBStore {
  /// The scratch table's name: an older msglog's step 2 filled it with
  /// zero pages; dropped first thing, if a killed purge left it.
  static let purgeScratch = "purge-scratch"
  /// How many times step 2 runs before a reader that holds old pages is
  /// reported instead of waited for.
  static let purgeRounds = 8

  /// A reader's hold is waited for a second or so at most: nothing said meanwhile.
  package func purge(waiting: (String) -> Void) throws -> UInt64? {
    guard let tables = try tablesThatHaveNotWritten() else {
      throw MsglogError.noDatabase(location: path, store: .lmdb, emptyDirectory: false)
    }
    // A purge writes: refused where any write is, for the same reason.
    try checkMayWrite()
    let environment = tables.environment
    // A reader slot left by a killed process pins pages for ever: clear them.
    var dead: Int32 = 0
    mdb_reader_check(environment.env, &dead)
    let cleared = try environment.write { txn -> UInt64 in
      try Self.dropScratch(in: txn)
      try txn.empty(try LMDBTables.purgeMarks(in: txn, create: true)!)
      try LMDBTables.startPurgeMarks(in: txn)
      // Processes writing on say their buffers predate it, and open afresh.
      try LMDBTables.notePurge(in: txn)
      return UInt64(mdb_txn_id(txn.handle))
    }
    // A commit of its own between: LMDB hands out the pages a commit freed
    // only once another has followed it, and step 2 takes what LMDB would.
    // (`[0]` put again as it is: a page changed, nothing else; the pages
    // this frees hold table names and page numbers.)
    try environment.write { txn in
      try txn.put(try LMDBTables.purgeMarks(in: txn, create: true)!, LMDBTables.marksCompleteKey, [])
    }
    var scrubbed: UInt64 = 0
    var wait: UInt32 = 5_000
    for round in 0..<Self.purgeRounds {
      // Changes nothing: LMDB commits it without writing.
      let (bytes, held) = try environment.write {
        try Self.scrubFreePages(in: $0, of: environment, freedBy: cleared, scanGaps: round == 0)
      }
      scrubbed += bytes
      if !held { return scrubbed }
      // A reader's snapshot still sees pages step 1 (or an erase before
      // it) freed: once it moves on they are free to take.
      if round + 1 < Self.purgeRounds { usleep(wait) }
      wait *= 2
    }
    throw MsglogError.purgeHeldByReader(location: path)
  }

  private static func dropScratch(in txn: Transaction) throws {
    guard let scratch = try txn.openTable(purgeScratch, create: false) else { return }
    try txn.dropTable(scratch)
  }
}
