import MsglogCore

/// The statements that write, lock and end transactions. A write's rows go
/// as one statement per table and kind, each column an array
/// (`INSERT … SELECT * FROM unnest($1, $2, …)`), or for a bulk load as
/// `COPY … FROM STDIN` (`copy`).
extension PostgresSchema {
  // MARK: Transactions

  static let begin = Statement("BEGIN")
  /// A write's snapshot, validated by the lock its commit takes (`lockHead`).
  static let beginSnapshot = Statement("BEGIN ISOLATION LEVEL REPEATABLE READ")
  static let beginReading = Statement("BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY")
  static let commit = Statement("COMMIT")
  static let rollBack = Statement("ROLLBACK")

  // MARK: The head

  /// Locks the head row. In a repeatable-read transaction it fails (could
  /// not serialize) if another writer committed after the snapshot.
  static let lockHead = Statement("SELECT seq FROM msglog.head WHERE id = 1 FOR UPDATE")

  /// Locks the head row, and fails unless it is as a write on what was
  /// known has it: its seq, and its version (xmin), which any other write
  /// changes — a rebuild that leaves the seq too. The check is made on the
  /// row as locked, above the subquery that locks it: behind a commit
  /// still flushing (an overlapped batch, `CommitQueue`), `FOR UPDATE`
  /// waits for it and hands up the row it left. Checked in the same query
  /// level, it would be evaluated on the snapshot's row before the lock is
  /// even tried, and every write sent behind a commit would fail at once
  /// and run again. Plain SQL cannot raise an error of its own (no
  /// PL/pgSQL), so the check divides by zero; the transaction reads that
  /// failure of this statement as `HeadMoved`.
  static func lockHead(ifAt seq: UInt64, version: String) -> Statement {
    Statement(
      "SELECT 1 / (seq = $1 AND xmin::text = $2)::int FROM (SELECT seq, xmin FROM msglog.head WHERE id = 1 FOR UPDATE) h",
      [.uint64(seq), .text(version)])
  }

  /// Moves the head; returns the row's new version (its xmin), which names
  /// this transaction, for the next write on what it leaves known.
  static func moveHead(to seq: UInt64) -> Statement {
    Statement("UPDATE msglog.head SET seq = $1 WHERE id = 1 RETURNING xmin::text", [.uint64(seq)])
  }

  /// Tells followers the head moved, once the commit that moved it is
  /// durable: a transaction of its own, sent behind that `COMMIT`, whose
  /// own commit is not waited for (`synchronous_commit` off for it alone:
  /// a notification lost in a crash costs nothing, as followers read the
  /// head again when they connect again). Its commit holds PostgreSQL's
  /// lock for notifying transactions only a moment; a `NOTIFY` in the
  /// writing transaction would hold it through that transaction's flush,
  /// and every other notifying commit would wait for it.
  static func notifyAfterCommit(head: UInt64) -> [Statement] {
    [
      begin,
      Statement(
        "SELECT set_config('synchronous_commit', 'off', true), pg_notify('msglog', $1)", [.text(String(head))]),
      commit,
    ]
  }

  /// What followers listen on.
  static let listen = Statement("LISTEN msglog")

  // MARK: Rows

  /// Empties every derived table and the summary, for a rebuild.
  static let clearDerived = [
    Statement("DELETE FROM msglog.streams"), Statement("DELETE FROM msglog.nodes"),
    Statement("DELETE FROM msglog.ids"), Statement("DELETE FROM msglog.checkpoints"),
    Statement("DELETE FROM msglog.meta WHERE key = 'summary'"),
  ]

  static func insertEvents(
    seqs: [UInt64], streams: [[UInt8]], versions: [UInt64], inserted: [ItemID?], records: [[UInt8]]
  ) -> Statement {
    Statement(
      "INSERT INTO msglog.events (seq, stream, version, inserted, record) SELECT * FROM unnest($1::int8[], $2::bytea[], $3::int8[], $4::uuid[], $5::bytea[])",
      [.int64s(seqs), .byteas(streams), .int64s(versions), .uuids(inserted), .byteas(records)])
  }

  /// An erase's blanked records over the ones at their seqs: the row is
  /// updated (a new tuple; the old one is dead until a VACUUM, which is
  /// what `msglog purge` is for).
  static func replaceRecords(seqs: [UInt64], records: [[UInt8]]) -> Statement {
    Statement(
      "UPDATE msglog.events AS e SET record = r.record FROM unnest($1::int8[], $2::bytea[]) AS r(seq, record) WHERE e.seq = r.seq",
      [.int64s(seqs), .byteas(records)])
  }

  static func putStreamHeads(streams: [[UInt8]], roots: [UInt64], rows: [[UInt8]]) -> Statement {
    Statement(
      "INSERT INTO msglog.streams (stream, root, head) SELECT * FROM unnest($1::bytea[], $2::int8[], $3::bytea[]) ON CONFLICT (stream) DO UPDATE SET root = EXCLUDED.root, head = EXCLUDED.head",
      [.byteas(streams), .int64s(roots), .byteas(rows)])
  }

  static func putNodes(streams: [[UInt8]], nodes: [UInt64], bodies: [[UInt8]]) -> Statement {
    Statement(
      "INSERT INTO msglog.nodes (stream, node, body) SELECT * FROM unnest($1::bytea[], $2::int8[], $3::bytea[]) ON CONFLICT (stream, node) DO UPDATE SET body = EXCLUDED.body",
      [.byteas(streams), .int64s(nodes), .byteas(bodies)])
  }

  static func deleteNodes(streams: [[UInt8]], nodes: [UInt64]) -> Statement {
    Statement(
      "DELETE FROM msglog.nodes AS n USING unnest($1::bytea[], $2::int8[]) AS d(stream, node) WHERE n.stream = d.stream AND n.node = d.node",
      [.byteas(streams), .int64s(nodes)])
  }

  static func putIdEntries(ids: [ItemID], entries: [[UInt8]]) -> Statement {
    Statement(
      "INSERT INTO msglog.ids (id, entry) SELECT * FROM unnest($1::uuid[], $2::bytea[]) ON CONFLICT (id) DO UPDATE SET entry = EXCLUDED.entry",
      [.uuids(ids), .byteas(entries)])
  }

  static func putCheckpoints(streams: [[UInt8]], seqs: [UInt64], bodies: [[UInt8]]) -> Statement {
    Statement(
      "INSERT INTO msglog.checkpoints (stream, seq, body) SELECT * FROM unnest($1::bytea[], $2::int8[], $3::bytea[]) ON CONFLICT (stream, seq) DO UPDATE SET body = EXCLUDED.body",
      [.byteas(streams), .int64s(seqs), .byteas(bodies)])
  }

  static func putSummary(_ row: [UInt8]) -> Statement {
    Statement(
      "INSERT INTO msglog.meta (key, value) VALUES ('summary', $1) ON CONFLICT (key) DO UPDATE SET value = EXCLUDED.value",
      [.bytes(row)])
  }

  // MARK: Bulk loads

  /// The tables a bulk load copies rows into, with their columns in the
  /// order of each row (`CopyRows`).
  enum CopyTable {
    /// seq int8, stream bytea, version int8, inserted uuid (NULL but for
    /// an insert), record bytea.
    case events
    /// stream bytea, node int8, body bytea.
    case nodes
    /// id uuid, entry bytea.
    case ids
    /// stream bytea, seq int8, body bytea.
    case checkpoints

    var columns: Int16 {
      switch self {
      case .events: return 5
      case .nodes, .checkpoints: return 3
      case .ids: return 2
      }
    }
  }

  /// What the keys a bulk load builds after its rows may sort in: a
  /// million rows' keys sorted in memory rather than in files, split
  /// between the server's parallel workers (the default, 64 MB, made the
  /// events' keys 12 % slower), for this transaction only.
  static let keyBuildMemory = Statement("SET LOCAL maintenance_work_mem = '256MB'")

  /// The `COPY` that takes `table`'s rows in PostgreSQL's binary format.
  static func copy(into table: CopyTable) -> String {
    let target: String
    switch table {
    case .events: target = "msglog.events (seq, stream, version, inserted, record)"
    case .nodes: target = "msglog.nodes (stream, node, body)"
    case .ids: target = "msglog.ids (id, entry)"
    case .checkpoints: target = "msglog.checkpoints (stream, seq, body)"
    }
    return "COPY \(target) FROM STDIN (FORMAT binary)"
  }
}
