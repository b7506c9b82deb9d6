import Foundation
import MsglogTestSupport
import Testing

@testable import Msglog
@testable import MsglogCore
@testable import MsglogLMDB

/// An import into empty streams is built in one pass (`BulkImport`) rather
/// than command by command; what it leaves on disk must be, table by table
/// and byte for byte, what the ledger's path leaves.
@Suite struct BulkImportTests {
  /// Every row of every table (and the list of tables) of a closed database.
  static func tables(_ path: String) throws -> [String: [[UInt8]]] {
    let store = try LMDBTables(path: path, create: false)
    let named: [(String, Database)] = [
      ("meta", store.meta), ("events", store.events), ("heads", store.heads), ("order", store.order),
      ("ids", store.ids), ("stream-events", store.streamEvents), ("checkpoints", store.checkpoints),
    ]
    return try store.environment.read { txn in
      var all: [String: [[UInt8]]] = [:]
      for (name, db) in named + [("(names)", try store.environment.mainDatabase(in: txn))] {
        var rows: [[UInt8]] = []
        try txn.withCursor(db) { cursor in
          var entry = try cursor.first()
          while let (key, value) = entry {
            // The log's id is each database's own (made with it).
            if name == "meta", key.elementsEqual("log".utf8) {
              entry = try cursor.next()
              continue
            }
            // The main database's values are the named databases' own B-tree
            // roots, which differ with the order pages were filled in.
            rows.append(Array(key) + [0xFF] + (name == "(names)" ? [] : Array(value)))
            entry = try cursor.next()
          }
        }
        all[name] = rows
      }
      return all
    }
  }

  static func workload(count: Int, streams: [StreamName], seed: UInt64, idBase: Int = 0) -> [WriteRequest] {
    BulkImportCatalogue.workload(count: count, streams: streams, seed: seed, idBase: idBase)
  }

  /// Builds `before` by the ledger, then `requests` both ways: through the
  /// bulk path (which must take them) and through the ledger; every table equal.
  static func expectBothWaysEqual(
    before: [WriteRequest] = [], _ requests: [WriteRequest], checkpointInterval: Int = 256, pieces: Int = 0
  ) throws {
    let dir = TemporaryDirectory()
    let bulkPath = dir.path + "/bulk.lmdb", ledgerPath = dir.path + "/ledger.lmdb"
    do {
      let bulk = try DiskLog(bulkPath, checkpointInterval: checkpointInterval)
      let ledger = try DiskLog(ledgerPath, checkpointInterval: checkpointInterval)
      if !before.isEmpty {
        try bulk.perform(before)
        try ledger.perform(before)
      }
      bulk.clock.set(5000)
      let built = try bulk.log.bulkImport(requests)
      #expect(built != nil, "the bulk path took the import")
      let performed = try ledger.perform(requests, at: 5000).compactMap { $0 }
      #expect(built?.imported == performed.count)
      #expect(built?.head == performed.last?.event.seq)
      let report = try bulk.log.verify()
      #expect(report.isClean, "\(report.problems)")
      #expect(report.events == performed.last?.event.seq)
    }
    if pieces > 0 {
      // Each piece is a transaction of the new database's own.
      #expect(try LMDBTables(path: bulkPath, create: false).lastCommit >= pieces, "committed in pieces")
    }
    let a = try tables(bulkPath), b = try tables(ledgerPath)
    #expect(a.keys.sorted() == b.keys.sorted())
    for name in b.keys.sorted() {
      #expect(a[name]?.count == b[name]?.count, "rows of \(name)")
      #expect(a[name] == b[name], "table \(name)")
    }
    #expect(b["order"]!.count > 20, "order trees of several nodes")
    #expect(b["checkpoints"]!.count > 0, "checkpoints taken")
  }

  @Test func anImportIntoAnEmptyDatabaseIsTheSameBothWays() throws {
    try Self.expectBothWaysEqual(
      Self.workload(count: 6_000, streams: ["doc", "a", "é", "b\u{1F600}"], seed: 1), checkpointInterval: 16)
  }

  /// Past `LedgerSession.flushInterval` commands, where the ledger writes
  /// its derived rows part way and reads the nodes back.
  @Test func aLongImportIsTheSameBothWays() throws {
    try Self.expectBothWaysEqual(
      Self.workload(count: LedgerSession.flushInterval + 4_000, streams: ["doc"], seed: 2))
  }

  /// A new database's first import commits in pieces inside its staging
  /// directory (`Environment.commitPiece`, every `pieceBytes` put, here
  /// lowered to 4 KiB): the same tables, and none of it seen before the end.
  @Test func anImportCommittedInPiecesIsTheSameBothWays() throws {
    try LMDBTables.LogTransaction.$pieceBytes.withValue(4096) {
      try Self.expectBothWaysEqual(
        Self.workload(count: 20_000, streams: ["doc", "a", "é"], seed: 5), checkpointInterval: 16, pieces: 100)
    }
  }

  /// New streams beside streams that have events: keys before, between and
  /// after theirs, ids checked against the log's.
  @Test func anImportIntoNewStreamsOfALogIsTheSameBothWays() throws {
    let before = Self.workload(count: 2_000, streams: ["b", "d"], seed: 3)
    try Self.expectBothWaysEqual(
      before: before, Self.workload(count: 3_000, streams: ["a", "c", "e"], seed: 4, idBase: 1_000_000),
      checkpointInterval: 8)
  }

  /// What the bulk path leaves to the ledger, which then writes or refuses
  /// as always: nothing of the bulk attempt is committed.
  @Test func itFallsBackWithoutWritingAnything() throws {
    let dir = TemporaryDirectory()
    let disk = try DiskLog(dir.db)
    try disk.log.append("first", to: "doc")
    let head = try disk.log.headSeq()
    let fresh = ItemID(canonical: "00000000-0000-4000-8000-00000000aaaa")!
    let used = try disk.log.items(of: "doc").items[0].id
    let unfit = BulkImportCatalogue.unfit(used: used, fresh: fresh)
    for (what, requests) in unfit {
      #expect(try disk.log.bulkImport(requests) == nil, "\(what)")
      #expect(try disk.log.headSeq() == head, "\(what)")
      #expect(try disk.log.streams().map(\.stream) == ["doc"], "\(what)")
    }
    #expect(try disk.log.verify().isClean)
  }
}
