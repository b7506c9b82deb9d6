import MsglogCore

/// A trimmed log on PostgreSQL (`TrimmedHistory.swift`, docs/FORMAT.md):
/// the horizon and the bases are rows of `msglog.meta` — `horizon` and
/// `base/NAME`, the same sealed rows as LMDB's — so that every role that
/// reads the log reads them with the privileges it has, and no new table
/// needs grants. The records the bases read stay in `msglog.events` under
/// their seqs; every walk of the log or of a stream starts at the horizon
/// (`Access+Reading` passes it), so they are read by seq only.
extension PostgresSchema {
  /// The version whose logs may be trimmed: the events before the horizon
  /// are gone, which an older msglog would take for damage (or serve as
  /// a log that begins at seq 1), so it refuses the log by its schema.
  static let trimmedVersion = 7
  /// The version whose base rows may name retired items (`RetiredItem`),
  /// the same tables: an older msglog refuses it rather than misread them.
  static let retiringVersion = 9

  /// The horizon's row (no row: never trimmed).
  static let horizonRow = Statement("SELECT value FROM msglog.meta WHERE key = 'horizon'")

  /// The same as a column of another statement (`opening`).
  static let horizonColumn = "(SELECT value FROM msglog.meta WHERE key = 'horizon')"

  /// Name and row of every base, in bytewise order of the names.
  static let bases = Statement(
    "SELECT convert_to(substr(key, 6), 'UTF8'), value FROM msglog.meta WHERE key LIKE 'base/%' "
      + "ORDER BY convert_to(key, 'UTF8')")

  /// Replaces the horizon and every base (those of an earlier trim go).
  static func putTrimmedHistory(horizon: [UInt8], streams: [StreamName], rows: [[UInt8]]) -> [Statement] {
    [
      Statement("DELETE FROM msglog.meta WHERE key = 'horizon' OR key LIKE 'base/%'"),
      Statement("INSERT INTO msglog.meta (key, value) VALUES ('horizon', $1)", [.bytes(horizon)]),
      Statement(
        "INSERT INTO msglog.meta (key, value) SELECT 'base/' || convert_from(n, 'UTF8'), v "
          + "FROM unnest($1::bytea[], $2::bytea[]) AS b(n, v)",
        [.byteas(streams.map(\.bytes)), .byteas(rows)]),
    ]
  }

  /// Deletes every record below `horizon` but those at `kept`; answers how many went.
  static func deleteRecords(below horizon: UInt64, keeping kept: [UInt64]) -> Statement {
    Statement(
      "WITH gone AS (DELETE FROM msglog.events WHERE seq < $1 AND NOT (seq = ANY($2)) RETURNING 1) "
        + "SELECT count(*) FROM gone",
      [.uint64(horizon), .int64s(kept)])
  }

  /// The rows of the records present in `[from, below)`: the per-stream
  /// index rows (the events table is its own) a trim to `below` drops.
  static func recordCount(from: UInt64, below: UInt64) -> Statement {
    Statement(
      "SELECT count(*) FROM msglog.events WHERE seq >= $1 AND seq < $2", [.uint64(from), .uint64(below)])
  }

  /// Deletes each stream's checkpoints below its base (the base is the
  /// one left below the horizon).
  static func deleteCheckpoints(streams: [StreamName], below seqs: [UInt64]) -> Statement {
    Statement(
      "DELETE FROM msglog.checkpoints AS c USING unnest($1::bytea[], $2::int8[]) AS b(stream, seq) "
        + "WHERE c.stream = b.stream AND c.seq < b.seq",
      [.byteas(streams.map(\.bytes)), .int64s(seqs)])
  }

  /// The version column of a record seeded below the horizon (a base's
  /// text, by an import of a trimmed log's export): minus its seq. The
  /// records a base holds carry the base's version, several to a stream,
  /// and the column is unique per stream; no read asks it of a record
  /// below the horizon, which is read by seq only.
  static func seededVersion(_ seq: UInt64) -> UInt64 { UInt64(bitPattern: -Int64(bitPattern: seq)) }

  /// Every table's rows counted, as `rowCounts`, and the events' rows from
  /// the horizon on (the per-stream index: below the horizon, only the
  /// records the bases read are left, out of every stream's walk).
  static func rowCounts(horizon: UInt64) -> Statement {
    Statement(
      "SELECT (SELECT count(*) FROM msglog.events), (SELECT count(*) FROM msglog.streams), "
        + "(SELECT count(*) FROM msglog.ids), (SELECT count(*) FROM msglog.nodes), "
        + "(SELECT count(*) FROM msglog.checkpoints), (SELECT count(*) FROM msglog.events WHERE seq >= $1)",
      [.uint64(horizon)])
  }
}
