import Foundation
import MsglogTestSupport
import Synchronization
import Testing

@testable import Msglog

/// An import into empty streams on PostgreSQL is built in one pass and
/// copied table by table (`BulkImport`, `COPY … FROM STDIN`); what it
/// leaves must be, table by table and byte for byte, what the ledger's
/// statements leave — and what it does not build, it leaves to the ledger
/// with nothing committed.
@Suite struct PostgresBulkImportTests {
  /// Every row of every msglog table in key order, as PostgreSQL prints it
  /// (bytea in hex), and the tables' keys and indexes.
  static func tables(_ database: String) -> [String: String] {
    let keys = [
      "meta": "key", "head": "id", "events": "seq", "streams": "stream", "nodes": "stream, node", "ids": "id",
      "checkpoints": "stream, seq",
    ]
    var all: [String: String] = [:]
    for (table, key) in keys {
      // The log's id is each database's own (made with it).
      let own = table == "meta" ? " WHERE key <> 'log'" : ""
      let r = PostgresCluster.psql("SELECT t::text FROM msglog.\(table) t\(own) ORDER BY \(key)", database: database)
      all[table] = r.code == 0 ? r.stdout : "\(r)"
    }
    all["(indexes)"] =
      PostgresCluster.psql(
        "SELECT indexdef FROM pg_indexes WHERE schemaname = 'msglog' ORDER BY indexname", database: database
      ).stdout
    all["(constraints)"] =
      PostgresCluster.psql(
        "SELECT conrelid::regclass, conname, pg_get_constraintdef(oid) FROM pg_constraint "
          + "WHERE connamespace = 'msglog'::regnamespace ORDER BY conname", database: database
      ).stdout
    return all
  }

  static func rows(_ table: String, _ database: String) -> Int {
    Int(
      PostgresCluster.psql("SELECT count(*) FROM msglog.\(table)", database: database).stdout
        .trimmingCharacters(in: .whitespacesAndNewlines)) ?? -1
  }

  /// Builds `before` by the ledger, then `requests` both ways: through the
  /// bulk path (which must take them) and through the ledger, each in a
  /// database of its own; every table equal.
  static func expectBothWaysEqual(
    before: [WriteRequest] = [], _ requests: [WriteRequest], checkpointInterval: Int = 256
  ) throws {
    let bulkDB = PostgresCluster.createDatabase(), ledgerDB = PostgresCluster.createDatabase()
    defer {
      PostgresCluster.dropDatabase(bulkDB.name)
      PostgresCluster.dropDatabase(ledgerDB.name)
    }
    do {
      let configuration = EventLog.Configuration(checkpointInterval: checkpointInterval)
      let bulk = try EventLog(bulkDB.url, configuration: configuration)
      let ledger = try EventLog(ledgerDB.url, configuration: configuration)
      if !before.isEmpty {
        _ = try bulk.perform(before)
        _ = try ledger.perform(before)
      }
      let built = try bulk.bulkImport(requests)
      #expect(built != nil, "the bulk path took the import")
      let performed = try ledger.perform(requests).compactMap { $0 }
      #expect(built?.imported == performed.count)
      #expect(built?.head == performed.last?.event.seq)
      let report = try bulk.verify()
      #expect(report.isClean, "\(report.problems)")
      #expect(report.events == performed.last?.event.seq)
    }
    let a = tables(bulkDB.name), b = tables(ledgerDB.name)
    #expect(a.keys.sorted() == b.keys.sorted())
    for name in b.keys.sorted() {
      #expect(a[name] == b[name], "table \(name)")
    }
    #expect(rows("nodes", ledgerDB.name) > 20, "order trees of several nodes")
    #expect(rows("checkpoints", ledgerDB.name) > 0, "checkpoints taken")
  }

  /// Into a database without a schema: the import's transaction creates it,
  /// and builds the events' and ids' keys after their rows.
  @Test func anImportIntoAnEmptyDatabaseIsTheSameBothWays() throws {
    try Self.expectBothWaysEqual(
      BulkImportCatalogue.workload(count: 6_000, streams: ["doc", "a", "é", "b\u{1F600}"], seed: 1),
      checkpointInterval: 16)
  }

  /// Past `LedgerSession.flushInterval` commands, where the ledger sends
  /// its derived rows part way and reads the nodes back.
  @Test func aLongImportIsTheSameBothWays() throws {
    try Self.expectBothWaysEqual(
      BulkImportCatalogue.workload(count: LedgerSession.flushInterval + 4_000, streams: ["doc"], seed: 2))
  }

  /// New streams beside streams that have events: copied into tables that
  /// keep their keys, ids checked by the events table's own constraint.
  @Test func anImportIntoNewStreamsOfALogIsTheSameBothWays() throws {
    let before = BulkImportCatalogue.workload(count: 2_000, streams: ["b", "d"], seed: 3)
    try Self.expectBothWaysEqual(
      before: before,
      BulkImportCatalogue.workload(count: 3_000, streams: ["a", "c", "e"], seed: 4, idBase: 1_000_000),
      checkpointInterval: 8)
  }

  /// What the bulk path leaves to the ledger, which then writes or refuses
  /// as always: nothing of the bulk attempt is committed — also when it
  /// gives up in the middle of a copy (a refused line after thousands of
  /// good ones), or when the database refuses a row (an id the log knows,
  /// found by the events table's constraint while the rows stream in).
  @Test func itFallsBackWithoutWritingAnything() throws {
    let s = Sandbox(.postgres)
    let log = try EventLog(s.db)
    try log.append("first", to: "doc")
    let used = try log.items(of: "doc").items[0].id
    let fresh = ItemID(canonical: "00000000-0000-4000-8000-00000000aaaa")!
    let many = (0..<5_000).map { WriteRequest(stream: "new", command: .insert(InsertRequest(text: "line \($0)"))) }
    let unfit =
      BulkImportCatalogue.unfit(used: used, fresh: fresh) + [
        ("a refused line after many", many + [WriteRequest(stream: "new", command: .remove(.id(fresh)))]),
        (
          "an id the log knows after many",
          many + [WriteRequest(stream: "other", command: .insert(InsertRequest(text: "x", id: used)))]
        ),
      ]
    let before = s.contents()
    for (what, requests) in unfit {
      #expect(try log.bulkImport(requests) == nil, "\(what)")
      #expect(s.contents() == before, "\(what)")
    }
    #expect(try log.verify().isClean)
    // The ledger's words, from the ordinary path.
    #expect(throws: MsglogError.self) { _ = try log.perform(unfit[1].1) }
    #expect(s.contents() == before)
  }

  /// A first import that gives up part way leaves the database as it was:
  /// no schema either (it was created in the import's own transaction).
  @Test func aFirstImportThatFallsBackCreatesNothing() throws {
    let s = Sandbox(.postgres)
    let log = try EventLog(s.db)
    let requests =
      (0..<3_000).map { WriteRequest(stream: "new", command: .insert(InsertRequest(text: "line \($0)"))) }
      + [WriteRequest(stream: "new", command: .insert(InsertRequest(index: 9_999, text: "out of range")))]
    #expect(try log.bulkImport(requests) == nil)
    #expect(s.isEmpty, "\(s.contents())")
    // The same import without the bad line takes the bulk path into the same database.
    #expect(try log.bulkImport(Array(requests.dropLast()))?.imported == 3_000)
    #expect(try log.verify().isClean)
  }

  /// Other writers append while a bulk import runs: the import commits
  /// whole, at seqs of its own one after another, and every seq of the log
  /// is there once (the head row's lock, taken before the first copy; an
  /// import whose snapshot another commit overtook runs again, locked).
  @Test func aBulkImportAmongOtherWritersIsWhole() throws {
    let s = Sandbox(.postgres)
    s.append("seed")
    let running = Atomic(true)
    let appended = Atomic(0)
    let group = DispatchGroup()
    for w in 0..<3 {
      DispatchQueue.global().async(group: group) {
        var i = 0
        while running.load(ordering: .relaxed) {
          let r = s.run(["append", "--stream", "w\(w)", "writer \(w) message \(i)"])
          if r.code == 0 { appended.add(1, ordering: .relaxed) } else { Issue.record("writer \(w): \(r)") }
          i += 1
        }
      }
    }
    while appended.load(ordering: .relaxed) < 3 { usleep(10_000) }
    let log = try EventLog(s.db)
    let requests = BulkImportCatalogue.workload(count: 20_000, streams: ["bulk", "bulk2"], seed: 5)
    let built = try log.bulkImport(requests)
    let during = appended.load(ordering: .relaxed)
    // Until a writer's append lands after the import (a watchdog bounds it).
    let deadline = Date().addingTimeInterval(60)
    while appended.load(ordering: .relaxed) <= during, Date() < deadline { usleep(10_000) }
    running.store(false, ordering: .relaxed)
    group.wait()
    #expect(appended.load(ordering: .relaxed) > during, "the writers went on after the import")
    let imported = try #require(built)
    let lines = s.run(["log", "--all", "--json"]).lines.map {
      (try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any]) ?? [:]
    }
    #expect(lines.map { $0["seq"] as? Int ?? -1 } == Array(1...lines.count), "seqs are not 1…head")
    let bulkSeqs = lines.filter { ($0["stream"] as? String ?? "").hasPrefix("bulk") }.map { $0["seq"] as? Int ?? -1 }
    #expect(bulkSeqs.count == imported.imported)
    #expect(bulkSeqs == Array((Int(imported.head) - imported.imported + 1)...Int(imported.head)), "not one run of seqs")
    #expect(lines.count == 1 + appended.load(ordering: .relaxed) + imported.imported)
    let r = s.run("verify")
    #expect(r.code == 0, "\(r)")
  }
}
