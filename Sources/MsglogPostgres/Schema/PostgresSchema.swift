import MsglogCore

/// msglog's tables in schema `msglog`, created by the first write (or
/// `msglog init`), and their versions in `msglog.meta`; every statement
/// msglog sends is in this type's extensions (`+Reads`, `+Writes`), so
/// that a change of a table is one change here.
///
/// A new schema version (records an older msglog cannot read): widen
/// `format.readable`. A new table or column: a step of `tableSteps`
/// (`+Tables`), which a new database takes at once and an older one from
/// its schema's owner.
enum PostgresSchema {
  /// The tables, without the keys a bulk load builds after it (`keys`).
  /// A checkpoint's body (a stream's slots, 24 bytes an item) is stored
  /// out of line uncompressed: ids hardly compress, and trying costs more
  /// than writing it (1M items' checkpoints: 7.8 s tried, 0.6 s not).
  static let tables = """
    CREATE TABLE msglog.meta (key text PRIMARY KEY, value bytea NOT NULL);
    CREATE TABLE msglog.head (id integer PRIMARY KEY CHECK (id = 1), seq bigint NOT NULL);
    CREATE TABLE msglog.events (
      seq bigint NOT NULL,
      stream bytea NOT NULL,
      version bigint NOT NULL,
      inserted uuid,
      record bytea NOT NULL);
    CREATE TABLE msglog.streams (stream bytea PRIMARY KEY, root bigint NOT NULL, head bytea NOT NULL);
    CREATE TABLE msglog.nodes (stream bytea NOT NULL, node bigint NOT NULL, body bytea NOT NULL, PRIMARY KEY (stream, node));
    CREATE TABLE msglog.ids (id uuid NOT NULL, entry bytea NOT NULL);
    CREATE TABLE msglog.checkpoints (stream bytea NOT NULL, seq bigint NOT NULL, body bytea NOT NULL, PRIMARY KEY (stream, seq));
    ALTER TABLE msglog.checkpoints ALTER COLUMN body SET STORAGE EXTERNAL;
    INSERT INTO msglog.head VALUES (1, 0);
    """

  /// A record's statistics would be sample values of records — texts and
  /// senders — copied into `pg_statistic`, which is not msglog's to purge,
  /// where an erase cannot reach them: ANALYZE gathers none (no query
  /// looks into a record, so the planner loses nothing). `purge` sends it
  /// to a database of any age.
  static let noRecordStatistics = Statement("ALTER TABLE msglog.events ALTER COLUMN record SET STATISTICS 0")

  /// Whether ANALYZE gathered statistics of the records (a database made
  /// before `noRecordStatistics`).
  static let recordStatistics = Statement(
    "SELECT count(*) > 0 FROM pg_stats WHERE schemaname = 'msglog' AND tablename = 'events' AND attname = 'record'")

  /// Drops the records' statistics: a change of the column to its own type
  /// does, without rewriting the table (refused while a view uses it).
  static let dropRecordStatistics = Statement("ALTER TABLE msglog.events ALTER COLUMN record TYPE bytea")

  /// `meta`'s `statistics-left` row: a purge dropped (or was dropping)
  /// records' statistics and has not yet rewritten `pg_statistic`'s file,
  /// so every purge says so until one that may (a superuser, the
  /// database's owner) has.
  static let statisticsLeft = Statement("SELECT EXISTS (SELECT FROM msglog.meta WHERE key = 'statistics-left')")
  static let markStatisticsLeft = Statement(
    "INSERT INTO msglog.meta VALUES ('statistics-left', '') ON CONFLICT (key) DO NOTHING")
  static let clearStatisticsLeft = Statement("DELETE FROM msglog.meta WHERE key = 'statistics-left'")

  /// Whether this role may rewrite `pg_statistic`: a superuser, or the
  /// database's owner (for anyone else VACUUM skips it, with a warning).
  static let mayVacuumStatistics = Statement(
    """
    SELECT rolsuper OR pg_get_userbyid((SELECT datdba FROM pg_database WHERE datname = current_database())) \
    = current_user FROM pg_roles WHERE rolname = current_user
    """)

  /// The owner of msglog's tables, when this role is neither it nor a
  /// superuser (nil: it may rewrite and alter them).
  static let tablesOwner = Statement(
    """
    SELECT CASE WHEN r.oid = c.relowner OR r.rolsuper THEN NULL ELSE pg_get_userbyid(c.relowner) END \
    FROM pg_class c, pg_roles r WHERE c.oid = 'msglog.events'::regclass AND r.rolname = current_user
    """)

  /// The keys and indexes of the two big tables, each added with the
  /// tables (`creation`), and named as PostgreSQL would name them: seqs,
  /// inserted ids and stream versions unique, each stream's events in seq
  /// order; ids unique. A bulk load into the tables its own transaction
  /// created drops them first and adds them after (an index built at once
  /// is several times cheaper than a million inserts into it); nobody
  /// else can see those tables meanwhile, so nothing waits for them.
  static let keys: [CopyTable: (add: [Statement], drop: [Statement])] = [
    .events: (
      add: [
        Statement(
          "ALTER TABLE msglog.events ADD CONSTRAINT events_pkey PRIMARY KEY (seq), "
            + "ADD CONSTRAINT events_inserted_key UNIQUE (inserted), "
            + "ADD CONSTRAINT events_stream_version_key UNIQUE (stream, version)"),
        Statement("CREATE INDEX events_by_stream ON msglog.events (stream, seq)"),
      ],
      drop: [
        Statement(
          "ALTER TABLE msglog.events DROP CONSTRAINT events_pkey, DROP CONSTRAINT events_inserted_key, "
            + "DROP CONSTRAINT events_stream_version_key"),
        Statement("DROP INDEX msglog.events_by_stream"),
      ]
    ),
    .ids: (
      add: [Statement("ALTER TABLE msglog.ids ADD CONSTRAINT ids_pkey PRIMARY KEY (id)")],
      drop: [Statement("ALTER TABLE msglog.ids DROP CONSTRAINT ids_pkey")]
    ),
  ]

  /// The schema's versions, `meta`'s `schema` row: 1; 2 once the log holds
  /// a record of format 2 (an edit, a restore, an undo), with the same
  /// tables, so a log without the new events stays readable by a msglog
  /// that knows only 1; 3 once it holds a record of format 3 (an event
  /// with its origin, from a replica) or sync's state, with sync's two
  /// tables (`PostgresSchema+Sync`); 4 once a row of them holds a
  /// replica's secret's hash (`secretsVersion`), the same tables; 5 once
  /// it holds a named token (`tokensVersion`), so that an older msglog
  /// refuses to serve it rather than serve it without asking for one; 6
  /// once it holds an erase (record format 5); 7 once it is trimmed
  /// (`trimmedVersion`, `+Trim`), the same tables; 8 once it holds an
  /// unsign (record format 6) and the edits it unsigned; 9 once a base row
  /// names retired items (`retiringVersion`), the same tables.
  static let format = ContainerFormat(
    storedPrefix: "", shownPrefix: "schema ", readable: 1...9,
    holding: [
      EventRecord.formatVersion2: 2, EventRecord.formatVersion3: syncTablesVersion,
      EventRecord.formatVersion5: erasedVersion, EventRecord.formatVersion6: unsignedVersion,
    ])
  /// The version whose logs may hold an unsign (record format 6) and the
  /// unsigned edits it leaves, the same tables: an older msglog refuses it.
  static let unsignedVersion = 8
  /// The version whose logs may hold an erase (record format 5) and the
  /// framed, erased records it leaves in place of whole ones, the same
  /// tables: an older msglog refuses the log.
  static let erasedVersion = 6
  /// The version a new log starts at.
  static let firstVersion = 1

  /// The statement that reads what `evaluate` checks: it can ride in a
  /// transaction's opening round trip, so that a process checks the schema
  /// without a round trip of its own.
  static let metaQuery = Statement("SELECT key, value FROM msglog.meta WHERE key IN ('format', 'schema', 'tables')")

  /// Whether `metaQuery` failed because there is no msglog.meta at all (no
  /// schema yet, or not msglog's): `check` then tells which.
  static func isMissing(_ error: PostgresError) -> Bool {
    error.sqlState == PostgresError.undefinedTable || error.sqlState == PostgresError.undefinedSchema
      || isForeignTable(error)
  }

  /// The schema's versions when it is there and known; nil when there is none.
  static func check(_ connection: Connection, shown: String) throws -> Versions? {
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
      // No msglog.meta. A msglog schema without it belongs to something
      // else — unless a first write made both between the two reads (one
      // transaction: the schema seen, its meta is there too).
      if try connection.execute(namespaceQuery.sql).count > 0 {
        let again = Result { () throws(PostgresError) -> Rows in try connection.execute(metaQuery.sql) }
        if case .success(let meta) = again { return try evaluate(meta, shown: shown) }
        throw MsglogError.notAMsglogDatabase(
          location: shown, reason: "it has a schema named msglog that msglog did not make")
      }
      return nil
    }
    return try evaluate(meta, shown: shown)
  }

  /// Whether the database has a schema named msglog.
  static let namespaceQuery = Statement("SELECT 1 FROM pg_namespace WHERE nspname = 'msglog'")

  /// A database's versions: its schema's (`format`) and its tables' (`+Tables`).
  struct Versions: Equatable {
    var schema: Int
    var tables: Int
  }

  /// The versions `metaQuery` found; refuses the schema unless it names
  /// msglog's format at a version this msglog reads (`format`).
  static func evaluate(_ meta: Rows, shown: String) throws -> Versions {
    var values: [String: String] = [:]
    for row in 0..<meta.count { values[meta.text(row, 0) ?? ""] = meta.text(row, 1) }
    guard values["format"] == "msglog" else {
      throw MsglogError.notAMsglogDatabase(location: shown, reason: "its msglog.meta names no msglog format")
    }
    guard let version = try format.version(of: values["schema"], location: shown) else {
      throw MsglogError.notAMsglogDatabase(
        location: shown, reason: "its schema version is \(values["schema"] ?? "none")")
    }
    return Versions(schema: version, tables: tablesVersion(row: values["tables"], schema: version))
  }

  /// Whether reading msglog.meta failed because the table is not shaped as
  /// msglog's: a missing column (42703), a type that does not compare
  /// (class 42 but for a privilege, 42501) or a value that does not convert (class 22).
  static func isForeignTable(_ error: PostgresError) -> Bool {
    guard let state = error.sqlState, state != PostgresError.insufficientPrivilege else { return false }
    return state.hasPrefix("42") || state.hasPrefix("22")
  }

  /// The statements that create the schema with every table the log may
  /// need (`+Tables`), run in the first write's own transaction (or
  /// `msglog init`'s).
  static var creation: [Statement] {
    var statements = [Statement("CREATE SCHEMA msglog")]
    for table in tables.split(separator: ";") where !table.allSatisfy(\.isWhitespace) {
      statements.append(Statement(String(table)))
    }
    // ANALYZE gathers no statistics of a record.
    statements.append(noRecordStatistics)
    for table in [CopyTable.events, .ids] { statements += keys[table]!.add }
    statements += tableSteps.flatMap { $0 }
    statements.append(
      Statement(
        "INSERT INTO msglog.meta VALUES ('format', $1), ('schema', $2), ('log', $3), ('tables', $4)",
        [
          .bytes(Array("msglog".utf8)), .bytes(Array(format.stored(firstVersion).utf8)),
          .bytes(SyncRows.encodeLogID(.random())), .bytes(Array(String(tablesVersion).utf8)),
        ]))
    return statements
  }

  /// An older schema moved to `version`, in place, in the transaction that
  /// first needs it. The tables stay as they are — the new events need no
  /// column of their own: a restore inserts no id, an undo's target is in
  /// its record, an origin is in its record — and only the version changes,
  /// telling an older msglog that the log holds records it cannot read. A
  /// schema at 3 has sync's tables (an older msglog counts on it): the
  /// transaction makes sure of them first (`Access.makeSureOfSyncTables`).
  /// Never moves a newer schema back.
  static func upgrade(to version: Int) -> Statement {
    Statement(
      "UPDATE msglog.meta SET value = $1 WHERE key = 'schema' AND value = ANY($2)",
      [
        .bytes(Array(format.stored(version).utf8)),
        .byteas(format.readable.filter { $0 < version }.map { Array(format.stored($0).utf8) }),
      ])
  }

  /// Another first writer created the schema meanwhile.
  static func lostTheRace(_ error: PostgresError) -> Bool {
    error.sqlState == "42P06" || error.sqlState == PostgresError.uniqueViolation
  }
}
