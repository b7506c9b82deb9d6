import CLMDB
import Foundation
import Msglog
import MsglogCore
import MsglogTestSupport
import Testing

@testable import MsglogLMDB

/// The purge marks a deletion or a rewrite leaves (`LMDBTables.markForPurge`,
/// kept for an older msglog's purge, which copies the marked pages) and
/// this msglog's purge, which finds the same places by its gap scan
/// (`LMDBStore.dirtyGaps`) and clears the marks: no file of the database
/// holds the old bytes afterwards, marked or not, in a log an older
/// msglog erased too.
@Suite struct PurgeMarksTests {
  /// What the marks table holds: whether it says the marks are complete,
  /// whether a process wrote again, and the marks.
  private func marks(in path: String) throws -> (complete: Bool, reused: Bool, marks: Int)? {
    let tables = try LMDBTables(path: path, create: false)
    return try tables.environment.read { txn in
      guard let marks = try LMDBTables.purgeMarks(in: txn, create: false) else { return nil }
      let complete = try txn.get(marks, LMDBTables.marksCompleteKey) { _ in true } ?? false
      let reused = try txn.get(marks, LMDBTables.reusedBuffersKey) { _ in true } ?? false
      // The last purge's transaction (`[3]`) is no mark.
      let purged = try LMDBTables.lastPurge(in: txn) != nil
      return (complete, reused, Int(try txn.entries(marks)) - (complete ? 1 : 0) - (reused ? 1 : 0) - (purged ? 1 : 0))
    }
  }

  /// A log with two long texts of mallory's side by side (two to a page:
  /// erasing both leaves their old bytes in the page's unused middle; kept
  /// in the page, under half of it, their shorter erased records stay in
  /// it and only it is marked),
  /// written in one transaction, then erased by another `EventLog` (each
  /// the first write of its environment: no buffer reused).
  @discardableResult
  private func eraseTwoLongTexts(_ sentinel: String, in path: String) throws -> EventLog {
    let long = String(repeating: "\(sentinel) ", count: 1800 / (sentinel.count + 1))
    try EventLog(path).append(
      contentsOf: (0..<200).map { NewItem("filler \($0)") } + [
        NewItem("1 " + long, sender: "mallory"), NewItem("2 " + long, sender: "mallory"),
      ] + (0..<200).map { NewItem("filler after \($0)") })
    let log = try EventLog(path)
    #expect(try log.erase(sender: "mallory").erased.count == 2)
    return log
  }

  /// Erase and purge by one `EventLog` (as `erase --purge` does): the
  /// erase marks (the record whose page it had changed already), and the
  /// purge (in an environment of its own) leaves nothing of the texts.
  @Test func anEraseMarksTheRecordsItBlankedAndPurgeClearsThem() throws {
    let dir = TemporaryDirectory()
    let sentinel = "SENTINEL-" + UUID().uuidString
    do {
      let log = try eraseTwoLongTexts(sentinel, in: dir.db)
      #expect(!filesHolding(sentinel, in: dir.db).isEmpty)
      _ = try log.purge()
    }
    #expect(filesHolding(sentinel, in: dir.db).isEmpty, "\(filesHolding(sentinel, in: dir.db)) still hold it")
    #expect(try marks(in: dir.db).map { $0.complete && !$0.reused && $0.marks == 0 } == true)
  }

  /// The pages of the free list (LMDB's table 0: a freeing transaction's
  /// id → a count, then the page numbers).
  private func freePages(in path: String) throws -> Set<Int> {
    let tables = try LMDBTables(path: path, create: false)
    return try tables.environment.read { txn in
      var pages: Set<Int> = []
      try txn.withCursor(Database(dbi: 0)) { cursor in
        var entry = try cursor.first()
        while let (_, value) = entry {
          let count = Int(value.loadUnaligned(as: UInt64.self))
          for i in stride(from: 1, through: count, by: 1) {
            pages.insert(Int(value.loadUnaligned(fromByteOffset: i * 8, as: UInt64.self)))
          }
          entry = try cursor.next()
        }
      }
      return pages
    }
  }

  /// The pages of the data file holding `needle`.
  private func pagesHolding(_ needle: String, in path: String) throws -> Set<Int> {
    let data = try #require(FileManager.default.contents(atPath: path + "/data.mdb"))
    let size = try LMDBTables(path: path, create: false).environment.pageSize
    var pages: Set<Int> = []
    var from = data.startIndex
    while let found = data.range(of: Data(needle.utf8), in: from..<data.endIndex) {
      pages.insert((found.lowerBound - data.startIndex) / size)
      from = found.upperBound
    }
    return pages
  }

  /// An erase that is its process's first write overwrites each record with
  /// zeros before blanking it: the pages it writes hold no byte of the old
  /// texts (only the free list does, for purge to scrub), and it marks
  /// nothing for purge to copy.
  ///
  /// Every record is long, two to a page: one of mallory's, five apart, is
  /// the second of its page, whose bytes LMDB leaves in the page's unused
  /// middle when it shrinks (it moves the nodes below a shrunk one over it).
  @Test func aFirstWriteErasesLeavingTheTextsInFreePagesOnly() throws {
    let dir = TemporaryDirectory()
    let sentinel = "SENTINEL-" + UUID().uuidString
    let long = String(repeating: "\(sentinel) ", count: 1800 / (sentinel.count + 1))
    let filler = String(repeating: "filler ", count: 1800 / 7)
    try EventLog(dir.db).append(
      contentsOf: (0..<22).map { i in
        i % 5 == 3 ? NewItem("\(i) \(long)", sender: "mallory") : NewItem("\(i) \(filler)")
      })
    #expect(try EventLog(dir.db).erase(sender: "mallory").erased.count == 4)
    let holding = try pagesHolding(sentinel, in: dir.db)
    #expect(!holding.isEmpty, "the erase left no old page to purge")
    let free = try freePages(in: dir.db)
    #expect(holding.isSubset(of: free), "live pages \(holding.subtracting(free)) hold it")
    let left = try marks(in: dir.db)
    #expect(left.map { $0.complete && !$0.reused && $0.marks == 0 } == true, "\(String(describing: left))")
    _ = try EventLog(dir.db).purge()
    #expect(filesHolding(sentinel, in: dir.db).isEmpty, "\(filesHolding(sentinel, in: dir.db)) still hold it")
  }

  /// A free page purge zeroed reads zeros until a write reuses it: the
  /// next purge leaves it alone, and writes only the pages freed since (by
  /// its own commits and the one before: the marks, the free list).
  @Test func aPurgeWritesNoPageAnEarlierOneZeroed() throws {
    let dir = TemporaryDirectory()
    let sentinel = "SENTINEL-" + UUID().uuidString
    for piece in 0..<20 {
      try EventLog(dir.db).append(contentsOf: (0..<100).map { NewItem("\(sentinel) \(piece) filler \($0)") })
    }
    let first = try EventLog(dir.db).purge()
    let free = try freePages(in: dir.db).count
    let size = try LMDBTables(path: dir.db, create: false).environment.pageSize
    #expect(first > 0 && free > 20, "\(first) bytes scrubbed, \(free) pages free")
    let second = try EventLog(dir.db).purge()
    #expect(second < UInt64(free * size) / 2, "\(second) bytes scrubbed of \(free) free pages")
  }

  /// A log an older msglog erased (its erases left no marks table): purge
  /// leaves nothing of the texts either, and the marks are complete after.
  @Test func aLogErasedByAnOlderMsglogIsPurgedAsAnother() throws {
    let dir = TemporaryDirectory()
    let sentinel = "SENTINEL-" + UUID().uuidString
    try eraseTwoLongTexts(sentinel, in: dir.db)
    // The second's page was changed by the first's erase: it is marked.
    #expect(try marks(in: dir.db).map { $0.complete && !$0.reused && $0.marks == 1 } == true)
    // As an older msglog leaves it: no marks table.
    do {
      let env = try Environment(path: dir.db, readOnly: false, maxDatabases: 16, mapSize: 1 << 20)
      try env.write { txn in
        var dbi: MDB_dbi = 0
        #expect(mdb_dbi_open(txn.handle, LMDBTables.purgeMarksTable, 0, &dbi) == 0)
        #expect(mdb_drop(txn.handle, dbi, 1) == 0)
      }
    }
    #expect(try marks(in: dir.db) == nil)
    _ = try EventLog(dir.db).purge()
    #expect(filesHolding(sentinel, in: dir.db).isEmpty, "\(filesHolding(sentinel, in: dir.db)) still hold it")
    #expect(try marks(in: dir.db).map { $0.complete && !$0.reused && $0.marks == 0 } == true)
    let report = try EventLog(dir.db).verify()
    #expect(report.isClean && report.liveItems == 400, "\(report)")
  }

  /// A process's second write says it reused page buffers (for an older
  /// msglog's purge, which copies every page then); the next purge leaves
  /// nothing of the text (its gap scan finds what the buffers carried) and
  /// clears it.
  @Test func aProcessThatWritesAgainSaysSoAndTheNextPurgeClearsIt() throws {
    let dir = TemporaryDirectory()
    let sentinel = "SENTINEL-" + UUID().uuidString
    try EventLog(dir.db).append("\(sentinel) by eve", sender: "eve")
    #expect(try marks(in: dir.db).map { $0.complete && !$0.reused } == true)
    do {
      let log = try EventLog(dir.db)
      try log.append("first write of this one")
      try log.append("second write of this one")
      #expect(try log.erase(sender: "eve").erased.count == 1)
    }
    #expect(try marks(in: dir.db).map { $0.reused && $0.marks == 1 } == true)
    _ = try EventLog(dir.db).purge()
    #expect(filesHolding(sentinel, in: dir.db).isEmpty, "\(filesHolding(sentinel, in: dir.db)) still hold it")
    #expect(try marks(in: dir.db).map { $0.complete && !$0.reused && $0.marks == 0 } == true)
  }

  /// What a trim does with `markForPurge`: rows deleted with ordinary
  /// deletes, the range's first and last keys marked. Their page keeps the
  /// deleted bytes in its unused middle until purge zeroes it.
  @Test func aDeletedRangeMarkedAtItsEndsIsPurged() throws {
    let dir = TemporaryDirectory()
    let sentinel = "SENTINEL-" + UUID().uuidString
    try EventLog(dir.db).append("a log")
    let keys = (1...3).map { Array("zz-deleted-\($0)".utf8) }
    do {
      let tables = try LMDBTables(path: dir.db, create: true)
      try tables.environment.write { txn in
        for key in keys { try txn.put(tables.meta, key, Array(String(repeating: "\(sentinel) ", count: 8).utf8)) }
      }
      try tables.environment.write { txn in
        for key in keys { try txn.delete(tables.meta, key) }
        try tables.markForPurge(tables.meta, key: keys.first!, in: txn)
        try tables.markForPurge(tables.meta, key: keys.last!, in: txn)
      }
    }
    #expect(!filesHolding(sentinel, in: dir.db).isEmpty)
    #expect(try marks(in: dir.db).map { !$0.reused && $0.marks == 2 } == true)
    _ = try EventLog(dir.db).purge()
    #expect(filesHolding(sentinel, in: dir.db).isEmpty, "\(filesHolding(sentinel, in: dir.db)) still hold it")
  }
}
