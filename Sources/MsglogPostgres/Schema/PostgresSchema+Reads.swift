import MsglogCore

/// The statements that read, each with its parameters in the order its SQL
/// names them. Rows come back in the column order of the `SELECT`. A page's
/// size is part of the SQL (msglog's own constants, a handful of them), so
/// each size is prepared and planned for itself.
extension PostgresSchema {
  // MARK: The head

  /// The head seq.
  static let headSeq = Statement("SELECT seq FROM msglog.head WHERE id = 1")

  /// What a write opens with: the head seq (locked, or from the snapshot),
  /// the server's clock in milliseconds, the log's last record (whose time
  /// the clock must not fall behind) and whether the server is a standby
  /// (which refuses writes), and the horizon's row (`+Trim`).
  static func opening(locking: Bool) -> Statement {
    Statement(
      "SELECT h.seq, floor(extract(epoch FROM clock_timestamp()) * 1000)::int8, e.record, pg_is_in_recovery(), "
        + horizonColumn + " "
        + "FROM msglog.head h LEFT JOIN msglog.events e ON e.seq = h.seq WHERE h.id = 1"
        + (locking ? " FOR UPDATE OF h" : ""))
  }

  /// Whether the server is in recovery (a standby).
  static let inRecovery = Statement("SELECT pg_is_in_recovery()")

  // MARK: Events

  /// Seq and record of up to `limit` events from `seq` on.
  static func records(from seq: UInt64, limit: Int) -> Statement {
    Statement(
      "SELECT seq, record FROM msglog.events WHERE seq >= $1 ORDER BY seq LIMIT \(limit)", [.uint64(seq)])
  }

  /// The record at `seq`.
  static func record(at seq: UInt64) -> Statement {
    Statement("SELECT record FROM msglog.events WHERE seq = $1", [.uint64(seq)])
  }

  /// Seq and record of every event from `first` to `last`.
  static func records(between first: UInt64, and last: UInt64) -> Statement {
    Statement(
      "SELECT seq, record FROM msglog.events WHERE seq BETWEEN $1 AND $2 ORDER BY seq",
      [.uint64(first), .uint64(last)])
  }

  /// Seq and record of the events at `seqs`, in seq order.
  static func records(at seqs: [UInt64]) -> Statement {
    Statement("SELECT seq, record FROM msglog.events WHERE seq = ANY($1) ORDER BY seq", [.int64s(seqs)])
  }

  /// The seqs of up to `limit` of the stream's events from `seq` on.
  static func streamSeqs(of stream: StreamName, from seq: UInt64, limit: Int) -> Statement {
    Statement(
      "SELECT seq FROM msglog.events WHERE stream = $1 AND seq >= $2 ORDER BY seq LIMIT \(limit)",
      [.bytes(stream.bytes), .uint64(seq)])
  }

  /// Seq and record of up to `limit` of the stream's events from `seq`
  /// down to `floor` (the horizon).
  static func streamRecords(of stream: StreamName, downFrom seq: UInt64, to floor: UInt64, limit: Int) -> Statement {
    Statement(
      "SELECT seq, record FROM msglog.events WHERE stream = $1 AND seq <= $2 AND seq >= $3 "
        + "ORDER BY seq DESC LIMIT \(limit)",
      [.bytes(stream.bytes), .uint64(seq), .uint64(floor)])
  }

  /// The seq of the stream's last event from `seq` (the horizon) on (NULL: none).
  static func lastStreamSeq(of stream: StreamName, from seq: UInt64) -> Statement {
    Statement(
      "SELECT max(seq) FROM msglog.events WHERE stream = $1 AND seq >= $2", [.bytes(stream.bytes), .uint64(seq)])
  }

  /// Seq and record of the stream's last event.
  static func lastStreamRecord(of stream: StreamName) -> Statement {
    Statement(
      "SELECT seq, record FROM msglog.events WHERE stream = $1 ORDER BY seq DESC LIMIT 1", [.bytes(stream.bytes)])
  }

  // MARK: Derived rows

  /// The stream's head row.
  static func streamHead(_ stream: StreamName) -> Statement {
    Statement("SELECT head FROM msglog.streams WHERE stream = $1", [.bytes(stream.bytes)])
  }

  /// Name and head row of every stream, in bytewise name order (bytea
  /// compares bytewise: the order of LMDB's keys).
  static let streamHeads = Statement("SELECT stream, head FROM msglog.streams ORDER BY stream")

  /// The streams that have a head row, without the rows (`verify`).
  static let streamHeadNames = Statement("SELECT stream FROM msglog.streams ORDER BY stream")

  /// Name and head row of each of `streams` that has one.
  static func streamHeads(_ streams: [StreamName]) -> Statement {
    Statement("SELECT stream, head FROM msglog.streams WHERE stream = ANY($1)", [.byteas(streams.map(\.bytes))])
  }

  /// Stream, node id and body of the root node of each of `streams`' order trees.
  static func rootNodes(_ streams: [StreamName]) -> Statement {
    Statement(
      "SELECT n.stream, n.node, n.body FROM msglog.nodes n JOIN msglog.streams s ON s.stream = n.stream AND s.root = n.node WHERE s.stream = ANY($1)",
      [.byteas(streams.map(\.bytes))])
  }

  /// Node id and body of the stream's order-tree nodes `ids`.
  static func nodes(_ ids: [NodeID], of stream: StreamName) -> Statement {
    Statement(
      "SELECT node, body FROM msglog.nodes WHERE stream = $1 AND node = ANY($2)", [.bytes(stream.bytes), .int64s(ids)])
  }

  /// Id and entry of the id index rows of `ids`.
  static func idEntries(_ ids: [ItemID]) -> Statement {
    Statement("SELECT id, entry FROM msglog.ids WHERE id = ANY($1)", [.uuids(ids)])
  }

  /// Id and entry of up to `limit` id index rows from `id` on (uuid
  /// compares bytewise), `id` itself included or not.
  static func idEntries(from id: ItemID, including: Bool, limit: Int) -> Statement {
    Statement(
      "SELECT id, entry FROM msglog.ids WHERE id \(including ? ">=" : ">") $1 ORDER BY id LIMIT \(limit)", [.id(id)])
  }

  /// Seq and body of the stream's last checkpoint at or before `seq`.
  static func checkpoint(of stream: StreamName, atOrBefore seq: UInt64) -> Statement {
    Statement(
      "SELECT seq, body FROM msglog.checkpoints WHERE stream = $1 AND seq <= $2 ORDER BY seq DESC LIMIT 1",
      [.bytes(stream.bytes), .uint64(seq)])
  }

  /// The seqs of the stream's checkpoints.
  static func checkpointSeqs(of stream: StreamName) -> Statement {
    Statement("SELECT seq FROM msglog.checkpoints WHERE stream = $1 ORDER BY seq", [.bytes(stream.bytes)])
  }

  /// The summary row.
  static let summary = Statement("SELECT value FROM msglog.meta WHERE key = 'summary'")
}
