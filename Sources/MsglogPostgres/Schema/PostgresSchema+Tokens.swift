import MsglogCore

/// Named tokens on PostgreSQL: `msglog.tokens`, id → the token's row
/// (`TokenRows`, the same sealed JSON as LMDB's), made with the schema
/// (`+Tables`, tables version 3); the first row moves the schema to 5.
/// Every `serve` of the log reads it per request, so a token revoked
/// through any of them is refused by all.
extension PostgresSchema {
  /// The first schema version that may hold named tokens.
  static let tokensVersion = 5

  static let tokenTables = [
    Statement("CREATE TABLE IF NOT EXISTS msglog.tokens (id text PRIMARY KEY, token bytea NOT NULL)"),
    Statement("CREATE TABLE IF NOT EXISTS msglog.replica_owners (replica uuid PRIMARY KEY, owner bytea NOT NULL)"),
  ]

  /// The tokens' tables, as messages name them.
  static let tokenTableNames = ["msglog.tokens", "msglog.replica_owners"]

  static func replicaOwner(_ replica: ItemID) -> Statement {
    Statement("SELECT owner FROM msglog.replica_owners WHERE replica = $1", [.id(replica)])
  }

  /// The first owner stays: a race of two first pushes leaves the first
  /// committed, and the second's transaction reads it again after the
  /// head row's lock (`Access+Tokens`).
  static func putReplicaOwners(replicas: [ItemID], rows: [[UInt8]]) -> Statement {
    Statement(
      "INSERT INTO msglog.replica_owners (replica, owner) SELECT * FROM unnest($1::uuid[], $2::bytea[]) ON CONFLICT (replica) DO NOTHING",
      [.uuids(replicas), .byteas(rows)])
  }

  /// Whether the table is there (a database made by an older msglog has none).
  static let tokenTableExists = Statement("SELECT to_regclass('msglog.tokens') IS NOT NULL")

  static func token(id: String) -> Statement {
    Statement("SELECT token FROM msglog.tokens WHERE id = $1", [.text(id)])
  }

  static let allTokens = Statement("SELECT id, token FROM msglog.tokens ORDER BY id")

  static func putTokens(ids: [String], rows: [[UInt8]]) -> Statement {
    Statement(
      "INSERT INTO msglog.tokens (id, token) SELECT convert_from(i, 'UTF8'), t FROM unnest($1::bytea[], $2::bytea[]) AS r(i, t) "
        + "ON CONFLICT (id) DO UPDATE SET token = EXCLUDED.token",
      [.byteas(ids.map { Array($0.utf8) }), .byteas(rows)])
  }
}
