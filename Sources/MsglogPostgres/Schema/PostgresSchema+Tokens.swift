import MsglogCore

/// Named tokens on PostgreSQL: rows of `msglog.meta` — `token/ID` → the
/// token's row (`TokenRows`, the same sealed JSON as LMDB's) and
/// `replica-owner/UUID` → the id of the token that first pushed for that
/// replica — so that every role that reads the log reads them with the
/// privileges it has, and no new table needs grants. The first token
/// moves the schema to 5. Every `serve` of the log reads them per
/// request, so a token revoked through any of them is refused by all.
extension PostgresSchema {
  /// The first schema version that may hold named tokens.
  static let tokensVersion = 5

  static func tokenKey(_ id: String) -> String { "token/" + id }

  static func ownerKey(_ replica: ItemID) -> String { "replica-owner/" + replica.text }

  static func token(id: String) -> Statement {
    Statement("SELECT value FROM msglog.meta WHERE key = $1", [.text(tokenKey(id))])
  }

  /// Every token, in id order: a team's people, a few hundred rows at most.
  static let allTokens = Statement(
    "SELECT substr(key, 7), value FROM msglog.meta WHERE key LIKE 'token/%' ORDER BY key")

  static func putTokens(ids: [String], rows: [[UInt8]]) -> Statement {
    Statement(
      "INSERT INTO msglog.meta (key, value) SELECT 'token/' || convert_from(i, 'UTF8'), v "
        + "FROM unnest($1::bytea[], $2::bytea[]) AS r(i, v) ON CONFLICT (key) DO UPDATE SET value = EXCLUDED.value",
      [.byteas(ids.map { Array($0.utf8) }), .byteas(rows)])
  }

  static func replicaOwner(_ replica: ItemID) -> Statement {
    Statement("SELECT value FROM msglog.meta WHERE key = $1", [.text(ownerKey(replica))])
  }

  /// The first owner stays (`DO NOTHING`).
  static func putReplicaOwners(replicas: [ItemID], rows: [[UInt8]]) -> Statement {
    Statement(
      "INSERT INTO msglog.meta (key, value) SELECT 'replica-owner/' || convert_from(i, 'UTF8'), v "
        + "FROM unnest($1::bytea[], $2::bytea[]) AS r(i, v) ON CONFLICT (key) DO NOTHING",
      [.byteas(replicas.map { Array($0.text.utf8) }), .byteas(rows)])
  }
}
