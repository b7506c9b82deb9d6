import MsglogCore

/// The tables a database made by an older msglog lacks (`PostgresSchema+Tables`):
/// made by its schema's owner only, with a write of theirs; any other
/// role's write that needs them is refused, naming them.
extension PostgresStore.Access {
  /// Whether this role owns schema msglog: asked once per process, and
  /// only while the tables are behind.
  func ownsSchema() throws -> Bool {
    if let known = store.ownsSchema.withLock({ $0 }) { return known }
    let owns = try query(.meta, PostgresSchema.ownsSchema).bool(0, 0) == true
    store.ownsSchema.withLock { $0 = owns }
    return owns
  }

  /// Whether the tables are behind this msglog's (false until known).
  var tablesAreBehind: Bool { (store.tablesVersion ?? PostgresSchema.tablesVersion) < PostgresSchema.tablesVersion }

  /// Brings the tables up to this msglog's with a write that appends, when
  /// this role owns the schema: a database made by an older msglog gets
  /// the rest of its tables from its owner's next write.
  func bringTablesUpIfOwner() throws {
    guard lastAppended != nil, tablesAreBehind, try ownsSchema() else { return }
    buffer.upgradeTables(from: store.tablesVersion!)
  }

  /// Brings the tables up to this msglog's in this transaction (`msglog
  /// init`); names the tables when this role may not make them. The
  /// tables it makes, as messages name them.
  func bringTablesUp() throws -> [String] {
    guard tablesAreBehind else { return [] }
    guard try ownsSchema() else {
      // What this process knew may be stale (the owner ran `msglog init` since).
      store.noteVersions(try PostgresSchema.evaluate(query(.meta, PostgresSchema.metaQuery), shown: store.shown))
      guard tablesAreBehind else { return [] }
      throw MsglogError.missingTables(location: store.shown, tables: missingTables(at: store.tablesVersion!))
    }
    buffer.upgradeTables(from: store.tablesVersion!)
    return missingTables(at: store.tablesVersion!)
  }

  /// Sync's tables are there before a row goes into them, and before the
  /// schema moves to the version that promises them.
  func makeSureOfSyncTables() throws {
    guard (store.tablesVersion ?? PostgresSchema.tablesVersion) < 2 else { return }
    _ = try bringTablesUp()
  }

  /// The tables that versions after `version` add, as messages name them.
  private func missingTables(at version: Int) -> [String] {
    version < 2 ? PostgresSchema.syncTableNames : []
  }
}
