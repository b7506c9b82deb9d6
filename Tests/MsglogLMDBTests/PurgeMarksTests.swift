import CLMDB
import Foundation
import Msglog
import MsglogCore
import MsglogTestSupport
import Testing

@testable import MsglogLMDB

/// `purge` on LMDB rewrites the pages at the purge marks a deletion or a
/// rewrite left (`LMDBTables.markForPurge`), and every page of a log whose
/// erases an older msglog wrote (no marks); either way no file of the
/// database holds the old bytes afterwards.
@Suite struct PurgeMarksTests {
  private func filesHold(_ needle: String, in directory: String) -> [String] {
    let files = (try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? []
    return files.filter { FileManager.default.contents(atPath: directory + "/" + $0)?.range(of: Data(needle.utf8)) != nil }
  }

  /// What the marks table holds: whether it says the marks are complete,
  /// and the marks.
  private func marks(in path: String) throws -> (complete: Bool, marks: Int)? {
    let tables = try LMDBTables(path: path, create: false)
    return try tables.environment.read { txn in
      guard let marks = try LMDBTables.purgeMarks(in: txn, create: false) else { return nil }
      let complete = try txn.get(marks, LMDBTables.marksCompleteKey) { _ in true } ?? false
      return (complete, Int(try txn.entries(marks)) - (complete ? 1 : 0))
    }
  }

  /// A log with two long texts of mallory's side by side (two to a page:
  /// erasing both leaves their old bytes in the page's unused middle).
  private func eraseTwoLongTexts(_ sentinel: String, in path: String) throws {
    let log = try EventLog(path)
    let long = String(repeating: "\(sentinel) ", count: 1800 / (sentinel.count + 1))
    try log.append(contentsOf: (0..<200).map { NewItem("filler \($0)") })
    try log.append(contentsOf: [NewItem("1 " + long, sender: "mallory"), NewItem("2 " + long, sender: "mallory")])
    try log.append(contentsOf: (0..<200).map { NewItem("filler after \($0)") })
    #expect(try log.erase(sender: "mallory").erased.count == 2)
  }

  @Test func anEraseMarksTheRecordsItBlankedAndPurgeClearsThem() throws {
    let dir = TemporaryDirectory()
    let sentinel = "SENTINEL-" + UUID().uuidString
    try eraseTwoLongTexts(sentinel, in: dir.db)
    #expect(try marks(in: dir.db).map { $0.complete && $0.marks == 2 } == true)
    #expect(!filesHold(sentinel, in: dir.path + "/db.lmdb").isEmpty)
    _ = try EventLog(dir.db).purge()
    #expect(filesHold(sentinel, in: dir.db).isEmpty, "\(filesHold(sentinel, in: dir.db)) still hold it")
    #expect(try marks(in: dir.db).map { $0.complete && $0.marks == 0 } == true)
  }

  /// A log an older msglog erased (its erases left no marks table): the
  /// first purge puts every entry again, then the marks are complete.
  @Test func aLogErasedByAnOlderMsglogIsRewrittenWholeOnce() throws {
    let dir = TemporaryDirectory()
    let sentinel = "SENTINEL-" + UUID().uuidString
    try eraseTwoLongTexts(sentinel, in: dir.db)
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
    #expect(filesHold(sentinel, in: dir.db).isEmpty, "\(filesHold(sentinel, in: dir.db)) still hold it")
    #expect(try marks(in: dir.db).map { $0.complete && $0.marks == 0 } == true)
    let report = try EventLog(dir.db).verify()
    #expect(report.isClean && report.liveItems == 400, "\(report)")
  }

  /// What a trim does with `markForPurge`: rows deleted with ordinary
  /// deletes, the range's first and last keys marked. Their page keeps the
  /// deleted bytes in its unused middle until purge copies it.
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
    #expect(!filesHold(sentinel, in: dir.db).isEmpty)
    #expect(try marks(in: dir.db).map { $0.marks == 2 } == true)
    _ = try EventLog(dir.db).purge()
    #expect(filesHold(sentinel, in: dir.db).isEmpty, "\(filesHold(sentinel, in: dir.db)) still hold it")
  }
}
