import MsglogCore

/// Sync's rows on PostgreSQL (docs/SYNC.md): the log's id in `meta`, and
/// for a server its replicas' progress and the outcome of each change,
/// written in the transaction of the change's own effect. The rows hold
/// the same sealed values as LMDB's sync tables (`SyncRows`), so damage
/// reads the same on both stores.
///
/// The two tables are made with the schema (`+Tables`: a database made
/// before that gets them from its schema's owner); a schema at version 3,
/// which an event with its origin or sync's state moves it to, always has
/// them.
extension PostgresSchema {
  /// The first schema version that is sure to have sync's tables.
  static let syncTablesVersion = 3
  /// The first schema version whose `replicas` rows may hold a secret's
  /// hash and the outcomes kept (`SyncRows`), which an older msglog would
  /// misread: the same tables, the version moved by the write of such a row.
  static let secretsVersion = 4

  static let syncTables = [
    Statement(
      "CREATE TABLE IF NOT EXISTS msglog.replicas (replica uuid PRIMARY KEY, done bytea NOT NULL)"),
    Statement(
      "CREATE TABLE IF NOT EXISTS msglog.sync_outcomes "
        + "(replica uuid NOT NULL, change bigint NOT NULL, outcome bytea NOT NULL, PRIMARY KEY (replica, change))"),
  ]

  /// Whether sync's tables are there (a read of a log that never synced has none).
  static let syncTablesExist = Statement("SELECT to_regclass('msglog.sync_outcomes') IS NOT NULL")

  // MARK: The log's id

  static let logID = Statement("SELECT value FROM msglog.meta WHERE key = 'log'")

  /// The log's id, unless it has one: a log made before logs had ids gets
  /// one with its next write, and only one whoever writes first.
  static func giveLogID(_ id: ItemID) -> Statement {
    Statement(
      "INSERT INTO msglog.meta VALUES ('log', $1) ON CONFLICT (key) DO NOTHING", [.bytes(SyncRows.encodeLogID(id))])
  }

  // MARK: A remote's replicas

  static func progress(of replica: ItemID) -> Statement {
    Statement("SELECT done FROM msglog.replicas WHERE replica = $1", [.id(replica)])
  }

  /// Each replica's progress row (`SyncRows`), in the column that has
  /// always held it.
  static func putProgress(replicas: [ItemID], rows: [[UInt8]]) -> Statement {
    Statement(
      "INSERT INTO msglog.replicas (replica, done) SELECT * FROM unnest($1::uuid[], $2::bytea[]) ON CONFLICT (replica) DO UPDATE SET done = EXCLUDED.done",
      [.uuids(replicas), .byteas(rows)])
  }

  /// Forgets a replica's outcomes `from..<below` that appended nothing:
  /// an outcome's first byte is its kind, 1 for applied (`SyncRows`).
  static func forgetUnappliedOutcomes(by replica: ItemID, from: UInt64, below: UInt64) -> Statement {
    Statement(
      "DELETE FROM msglog.sync_outcomes WHERE replica = $1 AND change >= $2 AND change < $3 AND get_byte(outcome, 0) <> 1",
      [.id(replica), .uint64(from), .uint64(below)])
  }

  /// Sync's bookkeeping: replicas, outcomes, and the bytes of both tables
  /// with their indexes.
  static let syncBookkeeping = Statement(
    "SELECT (SELECT count(*) FROM msglog.replicas), (SELECT count(*) FROM msglog.sync_outcomes), "
      + "pg_total_relation_size('msglog.replicas') + pg_total_relation_size('msglog.sync_outcomes')")

  static func outcome(ofChange change: UInt64, by replica: ItemID) -> Statement {
    Statement(
      "SELECT outcome FROM msglog.sync_outcomes WHERE replica = $1 AND change = $2", [.id(replica), .uint64(change)])
  }

  /// A change's outcome, recorded once: a second for the same change is
  /// refused by the key, so no change is ever done twice whatever raced.
  static func putOutcomes(replicas: [ItemID], changes: [UInt64], outcomes: [[UInt8]]) -> Statement {
    Statement(
      "INSERT INTO msglog.sync_outcomes (replica, change, outcome) SELECT * FROM unnest($1::uuid[], $2::int8[], $3::bytea[])",
      [.uuids(replicas), .int64s(changes), .byteas(outcomes)])
  }

  /// The replicas from `replica` on (`including` it or not), in order.
  static func replicas(from replica: ItemID, including: Bool, limit: Int) -> Statement {
    Statement(
      "SELECT replica, done FROM msglog.replicas WHERE replica \(including ? ">=" : ">") $1 ORDER BY replica LIMIT $2",
      [.id(replica), .int64(Int64(limit))])
  }

  static func outcomes(by replica: ItemID, after change: UInt64, limit: Int) -> Statement {
    Statement(
      "SELECT change, outcome FROM msglog.sync_outcomes WHERE replica = $1 AND change > $2 ORDER BY change LIMIT $3",
      [.id(replica), .uint64(change), .int64(Int64(limit))])
  }

  /// Changes the head row's version without moving it: a transaction that
  /// writes only sync's rows (a push whose changes were all refused) still
  /// ends every other writer's knowledge of the log, as any write does.
  static let touchHead = Statement("UPDATE msglog.head SET seq = seq WHERE id = 1")
}
