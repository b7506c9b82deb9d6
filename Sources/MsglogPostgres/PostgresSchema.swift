import MsglogCore

/// The tables, created by the first write; their version lives in `msglog.meta`.
enum PostgresSchema {
  static let tables = """
    CREATE TABLE msglog.meta (key text PRIMARY KEY, value bytea NOT NULL);
    CREATE TABLE msglog.head (id integer PRIMARY KEY CHECK (id = 1), seq bigint NOT NULL);
    CREATE TABLE msglog.events (
      seq bigint PRIMARY KEY,
      stream bytea NOT NULL,
      version bigint NOT NULL,
      inserted uuid UNIQUE,
      record bytea NOT NULL,
      UNIQUE (stream, version));
    CREATE INDEX events_by_stream ON msglog.events (stream, seq);
    CREATE TABLE msglog.streams (stream bytea PRIMARY KEY, root bigint NOT NULL, head bytea NOT NULL);
    CREATE TABLE msglog.nodes (stream bytea NOT NULL, node bigint NOT NULL, body bytea NOT NULL, PRIMARY KEY (stream, node));
    CREATE TABLE msglog.ids (id uuid PRIMARY KEY, entry bytea NOT NULL);
    CREATE TABLE msglog.checkpoints (stream bytea NOT NULL, seq bigint NOT NULL, body bytea NOT NULL, PRIMARY KEY (stream, seq));
    INSERT INTO msglog.head VALUES (1, 0);
    """

  /// The statement that reads what `evaluate` checks: it can ride in a
  /// transaction's opening round trip, so that a process checks the schema
  /// without a round trip of its own.
  static let metaQuery = Statement("SELECT key, value FROM msglog.meta WHERE key IN ('format', 'schema')")

  /// Whether `metaQuery` failed because there is no msglog.meta at all (no
  /// schema yet, or not msglog's): `check` then tells which.
  static func isMissing(_ error: PostgresError) -> Bool {
    error.sqlState == PostgresError.undefinedTable || error.sqlState == PostgresError.undefinedSchema
      || isForeignTable(error)
  }

  /// The schema's version when it is there and known (1 or 2); nil when there is none.
  static func check(_ connection: Connection, shown: String) throws -> String? {
    let found = Result { () throws(PostgresError) -> Rows in
      try connection.execute(metaQuery.sql)
    }
    guard case .success(let meta) = found else {
      guard case .failure(let failure) = found,
        failure.sqlState == PostgresError.undefinedTable || failure.sqlState == PostgresError.undefinedSchema
      else {
        if case .failure(let failure) = found, isForeignTable(failure) {
          throw MsglogError.notAMsglogDatabase(
            location: shown, reason: "its msglog.meta table is not msglog's: \(failure.message)")
        }
        _ = try found.get()
        return nil
      }
      // No msglog.meta. A msglog schema without it belongs to something else.
      let schema = try connection.execute("SELECT 1 FROM pg_namespace WHERE nspname = 'msglog'")
      if schema.count > 0 {
        throw MsglogError.notAMsglogDatabase(
          location: shown, reason: "it has a schema named msglog that msglog did not make")
      }
      return nil
    }
    return try evaluate(meta, shown: shown)
  }

  /// The schema version `metaQuery` found (1 or 2); refuses it unless it
  /// names msglog's format at a schema version this msglog reads.
  static func evaluate(_ meta: Rows, shown: String) throws -> String {
    var values: [String: String] = [:]
    for row in 0..<meta.count { values[meta.text(row, 0) ?? ""] = meta.text(row, 1) }
    guard values["format"] == "msglog" else {
      throw MsglogError.notAMsglogDatabase(location: shown, reason: "its msglog.meta names no msglog format")
    }
    let version = values["schema"] ?? "none"
    guard !PostgresStore.readableSchemaVersions.contains(version) else { return version }
    if let found = Int(version), let known = Int(PostgresStore.schemaVersion), found > known {
      throw MsglogError.newerFormat(location: shown, found: "schema \(found)", known: "schema \(known)")
    }
    throw MsglogError.notAMsglogDatabase(location: shown, reason: "its schema version is \(version)")
  }

  /// Whether reading msglog.meta failed because the table is not shaped as
  /// msglog's: a missing column (42703), a type that does not compare
  /// (class 42 but for a privilege, 42501) or a value that does not convert (class 22).
  static func isForeignTable(_ error: PostgresError) -> Bool {
    guard let state = error.sqlState, state != PostgresError.insufficientPrivilege else { return false }
    return state.hasPrefix("42") || state.hasPrefix("22")
  }

  /// The statements that create the schema, run in the first write's own transaction.
  static var creation: [Statement] {
    [Statement("CREATE SCHEMA msglog")]
      + tables.split(separator: ";").filter { !$0.allSatisfy(\.isWhitespace) }.map { Statement(String($0)) }
      + [
        Statement(
          "INSERT INTO msglog.meta VALUES ('format', $1), ('schema', $2)",
          [.bytes(Array("msglog".utf8)), .bytes(Array(PostgresStore.firstSchemaVersion.utf8))])
      ]
  }

  /// Version 1 → 2, in place, in the transaction that appends the log's
  /// first record of format 2: the tables stay as they are (the new events
  /// need no column of their own: a restore inserts no id, an undo's target
  /// is in its record); the version tells an older msglog, which knows
  /// only version 1, that the log holds records it cannot read.
  static let upgrade = Statement(
    "UPDATE msglog.meta SET value = $1 WHERE key = 'schema' AND value <> $1",
    [.bytes(Array(PostgresStore.schemaVersion.utf8))])

  /// Another first writer created the schema meanwhile.
  static func lostTheRace(_ error: PostgresError) -> Bool {
    error.sqlState == "42P06" || error.sqlState == PostgresError.uniqueViolation
  }
}
