import MsglogCore

/// Sync's state over SQL (`PostgresSchema+Sync`): what a server keeps of
/// its replicas, written into the write buffer with the change's own
/// effect, so both commit together or not at all.
extension PostgresStore.Access: SyncStateWriter {
  /// Whether sync's tables may be read: known to be there (they come with
  /// the schema), else asked once (a database made by an older msglog
  /// that never synced has none).
  private func syncTablesReadable() throws -> Bool {
    if (store.tablesVersion ?? 0) >= 2 || buffer.tablesUpgrade != nil { return true }
    if let known = syncTablesKnown { return known }
    let exists = try query(.sync, PostgresSchema.syncTablesExist).bool(0, 0) == true
    syncTablesKnown = exists
    return exists
  }

  /// Moves the schema to 3 with this transaction, its tables made first
  /// (by the schema's owner only), unless it is known to be there (a stale
  /// knowledge only sends the idempotent upgrade again).
  private func makeSyncTables() throws {
    try makeSureOfSyncTables()
    if (store.schemaVersion ?? 0) < PostgresSchema.syncTablesVersion {
      buffer.upgradeSchema(to: PostgresSchema.syncTablesVersion)
    }
  }

  // MARK: The log's id

  package func logID() throws -> ItemID? {
    let rows = try query(.meta, PostgresSchema.logID)
    guard rows.count > 0 else { return nil }
    return try rows.withBytes(0, 0) { try SyncRows.decodeLogID($0) }
  }

  /// Only ever gives a log its id (a store made before logs had ids): an
  /// id the log has is kept.
  package func putLogID(_ id: ItemID) throws { buffer.giveLogID(id) }

  // MARK: A remote's replicas

  package func progress(of replica: ItemID) throws -> ReplicaProgress? {
    guard try syncTablesReadable() else { return nil }
    let rows = try query(.sync, PostgresSchema.progress(of: replica))
    guard rows.count > 0 else { return nil }
    return try rows.withBytes(0, 0) { try SyncRows.decodeProgress(of: replica, $0) }
  }

  package func putProgress(_ progress: ReplicaProgress, of replica: ItemID) throws {
    try makeSyncTables()
    // A row with a secret's hash is one an older msglog would misread.
    if progress.secret != nil, (store.schemaVersion ?? 0) < PostgresSchema.secretsVersion {
      buffer.upgradeSchema(to: PostgresSchema.secretsVersion)
    }
    buffer.putProgress(SyncRows.encode(progress, of: replica), of: replica)
  }

  package func forgetUnappliedOutcomes(by replica: ItemID, in range: Range<UInt64>) throws {
    guard !range.isEmpty else { return }
    try makeSyncTables()
    buffer.forgetUnappliedOutcomes(by: replica, in: range)
  }

  package func syncBookkeeping() throws -> SyncBookkeeping {
    guard try syncTablesReadable() else { return SyncBookkeeping() }
    let rows = try query(.sync, PostgresSchema.syncBookkeeping)
    return SyncBookkeeping(replicas: rows.uint64(0, 0) ?? 0, outcomes: rows.uint64(0, 1) ?? 0, bytes: rows.uint64(0, 2) ?? 0)
  }

  package func outcome(ofChange change: UInt64, by replica: ItemID) throws -> ChangeOutcome? {
    guard try syncTablesReadable() else { return nil }
    let rows = try query(.sync, PostgresSchema.outcome(ofChange: change, by: replica))
    guard rows.count > 0 else { return nil }
    let key = SyncRows.outcomeKey(change, by: replica)
    return try rows.withBytes(0, 0) { try SyncRows.decodeOutcome(.syncOutcomes, key: key, $0) }
  }

  package func putOutcome(_ outcome: ChangeOutcome, ofChange change: UInt64, by replica: ItemID) throws {
    try makeSyncTables()
    let key = SyncRows.outcomeKey(change, by: replica)
    buffer.putOutcome(SyncRows.encode(outcome, .syncOutcomes, key: key), ofChange: change, by: replica)
  }

  package func forEachReplica(_ body: (ItemID, ReplicaProgress) throws -> Bool) throws {
    guard try syncTablesReadable() else { return }
    var next = ItemID.nil
    var including = true
    try forEachRow(of: .sync, in: .of(1024), { PostgresSchema.replicas(from: next, including: including, limit: $0) }) {
      rows, row in
      let replica = rows.withBytes(row, 0) { ItemID(bytes: $0) }
      guard try body(replica, try rows.withBytes(row, 1) { try SyncRows.decodeProgress(of: replica, $0) }) else {
        return false
      }
      next = replica
      including = false
      return true
    }
  }

  package func forEachOutcome(by replica: ItemID, _ body: (UInt64, ChangeOutcome) throws -> Bool) throws {
    guard try syncTablesReadable() else { return }
    var after: UInt64 = 0
    try forEachRow(of: .sync, in: .of(4096), { PostgresSchema.outcomes(by: replica, after: after, limit: $0) }) {
      rows, row in
      let change = rows.uint64(row, 0)!
      let key = SyncRows.outcomeKey(change, by: replica)
      guard try body(change, try rows.withBytes(row, 1) { try SyncRows.decodeOutcome(.syncOutcomes, key: key, $0) }) else {
        return false
      }
      after = change
      return true
    }
  }
}
