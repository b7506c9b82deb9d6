import Foundation
import MsglogTestSupport
import Testing

@testable import Msglog
@testable import MsglogCore
@testable import MsglogLMDB

/// A clone is built as an import builds a new database (`bulkPull`) when
/// its remote's log is one the bulk path builds; what it leaves on disk
/// must be, table by table and byte for byte, what a clone through the
/// ledger leaves, and it must fall back to the ledger for anything else.
@Suite struct BulkCloneTests {
  /// Every table of a closed replica but its own state (its id and secret are its own).
  static func tables(_ path: String) throws -> [String: [[UInt8]]] {
    var tables = try BulkImportTests.tables(path)
    tables["meta"] = tables["meta"]!.filter { !$0.starts(with: Array("replica".utf8) + [0xFF]) }
    return tables
  }

  /// Clones `server` both ways and expects the same tables; returns how the first was built.
  static func cloneBothWays(_ server: EventLog, in dir: TemporaryDirectory) throws -> Bool {
    let remote = LogRemote(server)
    let bulkPath = dir.path + "/bulk.lmdb", ledgerPath = dir.path + "/ledger.lmdb"
    let bulk = try EventLog.clone(from: remote, remoteLocation: server.location, into: bulkPath)
    let ledger = try EventLog.clone(from: remote, remoteLocation: server.location, into: ledgerPath, inBulk: false)
    #expect(!ledger.builtInBulk)
    #expect(bulk.cloned == ledger.cloned)
    #expect(bulk.seq == ledger.seq)
    do {
      let replica = try EventLog(bulkPath)
      let report = try replica.verify()
      #expect(report.isClean, "\(report.problems)")
      #expect(try replica.replicaState()?.remoteHead == (try server.headSeq()))
      var exported: [Event] = []
      try replica.export { exported.append($0) }
      var original: [Event] = []
      try server.export { original.append($0) }
      #expect(exported == original)
    }
    let a = try tables(bulkPath), b = try tables(ledgerPath)
    #expect(a.keys.sorted() == b.keys.sorted())
    for name in b.keys.sorted() {
      #expect(a[name]?.count == b[name]?.count, "rows of \(name)")
      #expect(a[name] == b[name], "table \(name)")
    }
    return bulk.builtInBulk
  }

  @Test func aLogOfInsertsRemovesAndMovesIsClonedInBulk() throws {
    let dir = TemporaryDirectory()
    let server = try DiskLog(dir.path + "/server.lmdb", checkpointInterval: 16)
    try server.perform(
      BulkImportCatalogue.workload(count: 5_000, streams: ["doc", "a", "é", "b\u{1F600}"], seed: 7), at: 3000)
    #expect(try Self.cloneBothWays(server.log, in: dir))
  }

  /// Past the size of a pull's page, so the bulk path takes several pages in its one transaction.
  @Test func aLogOfManyPagesIsClonedInBulk() throws {
    let dir = TemporaryDirectory()
    let server = try DiskLog(dir.path + "/server.lmdb")
    try server.perform(BulkImportCatalogue.workload(count: 9_000, streams: ["doc"], seed: 8), at: 3000)
    #expect(try Self.cloneBothWays(server.log, in: dir))
  }

  /// An edit (or a restore, an undo, a replica's change) is the ledger's:
  /// the bulk path gives up having committed nothing, and the clone is the
  /// same as through the ledger.
  @Test func aLogWithAnEditIsClonedThroughTheLedger() throws {
    let dir = TemporaryDirectory()
    let server = try DiskLog(dir.path + "/server.lmdb")
    try server.perform(BulkImportCatalogue.workload(count: 3_000, streams: ["doc"], seed: 9), at: 3000)
    let item = try server.log.items(of: "doc").items[0]
    try server.log.edit(id: item.id, text: "edited", in: "doc")
    try server.log.append("after the edit", to: "doc")
    #expect(try !Self.cloneBothWays(server.log, in: dir))
  }
}
