import MsglogCore

/// Which of msglog's tables a database holds: a version of its own,
/// `meta`'s `tables` row, apart from the schema's version (which tells an
/// older msglog what records the log holds).
///
/// Every table the log may need is made with the schema, by whoever makes
/// the schema, so that one role owns them all: the other roles are then
/// granted privileges on them and never need CREATE on the schema, nor
/// come to own a table an owner's `pg_dump` cannot read or a `DROP OWNED
/// BY` would drop. A database made by an older msglog, whose tables are
/// behind, gets the rest from its schema's owner only: that owner's next
/// write, or `msglog init`.
///
/// A new version of the tables: a step in `tableSteps` (its statements
/// must be idempotent: two owners' writes may both send it, one after the
/// other under the head row's lock).
extension PostgresSchema {
  /// The tables this msglog makes: 1, the log's (`tables`); 2, with sync's
  /// (`syncTables`).
  static let tablesVersion = tableSteps.count + 1

  /// The statements that move the tables from version N to N+1, at index N-1.
  static let tableSteps: [[Statement]] = [syncTables]

  /// The version of a database's tables: its `tables` row, or for a
  /// database made before the row was kept, what its schema's version
  /// implies (a schema at 3 has sync's tables).
  static func tablesVersion(row: String?, schema: Int) -> Int {
    if let row, let version = Int(row) { return version }
    return schema >= syncTablesVersion ? 2 : 1
  }

  /// The statements that bring tables at `version` up to this msglog's,
  /// and record it.
  static func upgradeTables(from version: Int) -> [Statement] {
    guard version < tablesVersion else { return [] }
    return tableSteps[(version - 1)...].flatMap { $0 } + [recordTablesVersion]
  }

  static let recordTablesVersion = Statement(
    "INSERT INTO msglog.meta VALUES ('tables', $1) ON CONFLICT (key) DO UPDATE SET value = EXCLUDED.value",
    [.bytes(Array(String(tablesVersion).utf8))])

  /// Whether this role owns schema msglog (only its owner makes tables in it).
  static let ownsSchema = Statement(
    "SELECT pg_get_userbyid(nspowner) = current_user FROM pg_namespace WHERE nspname = 'msglog'")

  /// Every table of the log, as `msglog.name`: the ones a role needs
  /// privileges on.
  static let tableNames = [
    "meta", "head", "events", "streams", "nodes", "ids", "checkpoints", "replicas", "sync_outcomes",
  ]

  /// Sync's tables, as messages name them.
  static let syncTableNames = ["msglog.replicas", "msglog.sync_outcomes"]
}
