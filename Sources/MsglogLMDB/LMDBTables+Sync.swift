import CLMDB
import MsglogCore

/// Sync's tables (docs/FORMAT.md, "Sync"), opened when first needed, so a
/// log that never syncs has none of them:
/// - `meta` `log`:    the log's id (16 bytes), made with the database;
/// - `replicas`:      replica id → the highest change of it done here (a remote);
/// - `sync-outcomes`: replica id, change → what was done with it (a remote);
/// - `meta` `replica`: a replica's own state (`ReplicaState`);
/// - `pending`:       change → a replica's change not yet done, as JSON;
/// - `learned`:       change → what the remote did with it, as the replica learned it;
/// - `refused`:       change → a refusal the replica keeps until `status --clear`, as JSON;
/// - `meta` `local-view`: the replica's local view as its last local write
///   left it (`SavedLocalView`), so that a read need not perform the
///   pending changes again; ignored once stale, rebuilt by the next write.
/// Writing any of them, or a record of format 3, makes the database
/// `msglog/4`, which an older msglog refuses; a row with a replica's secret
/// (or its hash) makes it `msglog/5`.
extension LMDBTables {
  enum SyncTable: String, CaseIterable {
    case replicas = "replicas"
    case outcomes = "sync-outcomes"
    case pending = "pending"
    case learned = "learned"
    case refused = "refused"
  }

  /// The first version whose sync rows may hold secrets: a replica's state
  /// with its secret, a remote's progress row with a secret's hash and the
  /// outcomes it keeps (`SyncRows`), which an older msglog would misread.
  static let secretsVersion = 5

}

extension LMDBTables.LogTransaction: SyncStateWriter, ReplicaStateWriter {
  /// A sync table; nil when it does not exist and `create` is false (a
  /// read: the table is empty). Creating one makes the database `msglog/4`.
  private func table(_ table: LMDBTables.SyncTable, create: Bool) throws -> Database? {
    guard let db = try tableOpenedWhenNeeded(table.rawValue, create: create) else { return nil }
    if create { try marksFormat4() }
    return db
  }

  private func writable(_ table: LMDBTables.SyncTable) throws -> Database {
    try self.table(table, create: true)!
  }

  /// Makes the database `msglog/4` (once per transaction).
  func marksFormat4() throws {
    try moveContainer(atLeastTo: LMDBTables.syncTablesVersion)
  }

  /// Gives a log made before logs had ids its id, in its next write.
  func giveLogAnID() throws {
    guard !tables.hasLogID.withLock({ $0 }) else { return }
    if try logID() == nil { try putLogID(.random()) }
    tables.hasLogID.withLock { $0 = true }
  }

  // MARK: - The log's id

  package func logID() throws -> ItemID? {
    try txn.get(tables.meta, SyncRows.logKey) { try SyncRows.decodeLogID($0) }
  }

  package func putLogID(_ id: ItemID) throws {
    try txn.put(tables.meta, SyncRows.logKey, SyncRows.encodeLogID(id))
  }

  // MARK: - A remote's replicas

  package func progress(of replica: ItemID) throws -> ReplicaProgress? {
    guard let db = try table(.replicas, create: false) else { return nil }
    return try txn.get(db, replica.bytes) { try SyncRows.decodeProgress(of: replica, $0) }
  }

  package func putProgress(_ progress: ReplicaProgress, of replica: ItemID) throws {
    let db = try writable(.replicas)
    if progress.secret != nil { try moveContainer(atLeastTo: LMDBTables.secretsVersion) }
    try txn.put(db, replica.bytes, SyncRows.encode(progress, of: replica))
  }

  package func forgetUnappliedOutcomes(by replica: ItemID, in range: Range<UInt64>) throws {
    guard !range.isEmpty, let db = try table(.outcomes, create: false) else { return }
    var forgotten: [[UInt8]] = []
    try txn.withCursor(db) { cursor in
      var entry = try cursor.seek(SyncRows.outcomeKey(range.lowerBound, by: replica))
      while let (key, value) = entry, key.count == 24, key.prefix(16).elementsEqual(replica.bytes) {
        guard key.loadBigEndian(fromByteOffset: 16, as: UInt64.self) < range.upperBound else { break }
        let outcome = try SyncRows.decodeOutcome(.syncOutcomes, key: Array(key), value)
        if case .applied = outcome {} else { forgotten.append(Array(key)) }
        entry = try cursor.next()
      }
    }
    for key in forgotten { try txn.delete(db, key) }
  }

  package func syncBookkeeping() throws -> SyncBookkeeping {
    var bookkeeping = SyncBookkeeping()
    if let db = try table(.replicas, create: false) {
      let (entries, bytes) = try txn.size(db)
      bookkeeping.replicas = entries
      bookkeeping.bytes += bytes
    }
    if let db = try table(.outcomes, create: false) {
      let (entries, bytes) = try txn.size(db)
      bookkeeping.outcomes = entries
      bookkeeping.bytes += bytes
    }
    return bookkeeping
  }

  package func outcome(ofChange change: UInt64, by replica: ItemID) throws -> ChangeOutcome? {
    guard let db = try table(.outcomes, create: false) else { return nil }
    let key = SyncRows.outcomeKey(change, by: replica)
    return try txn.get(db, key) { try SyncRows.decodeOutcome(.syncOutcomes, key: key, $0) }
  }

  package func putOutcome(_ outcome: ChangeOutcome, ofChange change: UInt64, by replica: ItemID) throws {
    let key = SyncRows.outcomeKey(change, by: replica)
    try txn.put(try writable(.outcomes), key, SyncRows.encode(outcome, .syncOutcomes, key: key))
  }

  package func forEachReplica(_ body: (ItemID, ReplicaProgress) throws -> Bool) throws {
    guard let db = try table(.replicas, create: false) else { return }
    try txn.withCursor(db) { cursor in
      var entry = try cursor.first()
      while let (key, value) = entry {
        guard key.count == 16 else { throw DerivedDamage(.replicas, "a key of \(key.count) bytes is not a replica id") }
        let replica = ItemID(bytes: key)
        guard try body(replica, try SyncRows.decodeProgress(of: replica, value)) else { return }
        entry = try cursor.next()
      }
    }
  }

  package func forEachOutcome(by replica: ItemID, _ body: (UInt64, ChangeOutcome) throws -> Bool) throws {
    guard let db = try table(.outcomes, create: false) else { return }
    let prefix = replica.bytes
    try txn.withCursor(db) { cursor in
      var entry = try cursor.seek(prefix)
      while let (key, value) = entry, key.count == 24, key.prefix(16).elementsEqual(prefix) {
        let change = key.loadBigEndian(fromByteOffset: 16, as: UInt64.self)
        guard try body(change, try SyncRows.decodeOutcome(.syncOutcomes, key: Array(key), value)) else { return }
        entry = try cursor.next()
      }
    }
  }

  // MARK: - A replica's own

  package func replicaState() throws -> ReplicaState? {
    try txn.get(tables.meta, SyncRows.replicaKey) { try SyncRows.decodeReplicaState($0) }
  }

  package func putReplicaState(_ state: ReplicaState) throws {
    try marksFormat4()
    if state.secret != nil { try moveContainer(atLeastTo: LMDBTables.secretsVersion) }
    try txn.put(tables.meta, SyncRows.replicaKey, SyncRows.encode(state))
  }

  package func forEachPendingChange(_ body: (UInt64, [UInt8]) throws -> Bool) throws {
    try forEachJSON(in: .pending, .pending, body)
  }

  package func putPendingChange(_ change: UInt64, json: [UInt8]) throws {
    try txn.put(try writable(.pending), SyncRows.changeKey(change), SyncRows.sealJSON(json, .pending, change: change))
  }

  package func deletePendingChange(_ change: UInt64) throws {
    guard let db = try table(.pending, create: false) else { return }
    _ = try txn.delete(db, SyncRows.changeKey(change))
    try putSavedLocalView(nil)
  }

  package func pendingChangeCount() throws -> UInt64 {
    guard let db = try table(.pending, create: false) else { return 0 }
    return try txn.entries(db)
  }

  package func savedLocalView() throws -> [UInt8]? {
    try txn.get(tables.meta, SyncRows.localViewKey) { Array($0) }
  }

  package func putSavedLocalView(_ view: [UInt8]?) throws {
    guard let view else {
      _ = try txn.delete(tables.meta, SyncRows.localViewKey)
      return
    }
    try txn.put(tables.meta, SyncRows.localViewKey, view)
  }

  package func purgeIsOwed() throws -> Bool {
    try txn.get(tables.meta, SyncRows.purgeOwedKey) { _ in true } ?? false
  }

  /// A purge paid in buffers a purge found stale (`Environment.acceptBuffers`)
  /// is not marked paid: this very write may carry what it scrubbed.
  package func putPurgeOwed(_ owed: Bool) throws {
    if !owed, tables.environment.buffersMayHoldScrubbedBytes { return }
    if owed {
      try txn.put(tables.meta, SyncRows.purgeOwedKey, [])
    } else {
      _ = try txn.delete(tables.meta, SyncRows.purgeOwedKey)
    }
  }

  package func learnedOutcome(ofChange change: UInt64) throws -> ChangeOutcome? {
    guard let db = try table(.learned, create: false) else { return nil }
    let key = SyncRows.changeKey(change)
    return try txn.get(db, key) { try SyncRows.decodeOutcome(.learned, key: key, $0) }
  }

  package func putLearnedOutcome(_ outcome: ChangeOutcome, ofChange change: UInt64) throws {
    let key = SyncRows.changeKey(change)
    try txn.put(try writable(.learned), key, SyncRows.encode(outcome, .learned, key: key))
  }

  package func forEachRefused(_ body: (UInt64, [UInt8]) throws -> Bool) throws {
    try forEachJSON(in: .refused, .refused, body)
  }

  package func appendRefused(json: [UInt8]) throws {
    let db = try writable(.refused)
    // Rows kept before entries had numbers of their own are keyed by their
    // change: a new entry goes after the last either way.
    let entry: UInt64 = try txn.withCursor(db) { cursor in
      guard let (key, _) = try cursor.last() else { return 1 }
      guard key.count == 8 else { throw DerivedDamage(.refused, "a key of \(key.count) bytes is not an entry number") }
      return key.loadBigEndian(as: UInt64.self) + 1
    }
    try txn.put(db, SyncRows.changeKey(entry), SyncRows.sealJSON(json, .refused, change: entry))
  }

  package func clearRefused() throws {
    guard let db = try table(.refused, create: false) else { return }
    try txn.empty(db)
  }

  package func clearForReset(keepingLearned: Bool) throws {
    try clearDerived()
    try putSavedLocalView(nil)
    try txn.empty(tables.events)
    try clearTrimmedHistory()
    for table in [LMDBTables.SyncTable.learned, .replicas, .outcomes] where !(keepingLearned && table == .learned) {
      if let db = try self.table(table, create: false) { try txn.empty(db) }
    }
  }

  /// The JSON rows of a replica's table, in key order: change order
  /// (`pending`), or the order refusals were learned (`refused`).
  private func forEachJSON(
    in table: LMDBTables.SyncTable, _ kind: DerivedRows.Table, _ body: (UInt64, [UInt8]) throws -> Bool
  ) throws {
    guard let db = try self.table(table, create: false) else { return }
    try txn.withCursor(db) { cursor in
      var entry = try cursor.first()
      while let (key, value) = entry {
        guard key.count == 8 else { throw DerivedDamage(kind, "a key of \(key.count) bytes is not a number") }
        let change = key.loadBigEndian(as: UInt64.self)
        guard try body(change, try SyncRows.openJSON(kind, change: change, value)) else { return }
        entry = try cursor.next()
      }
    }
  }
}
