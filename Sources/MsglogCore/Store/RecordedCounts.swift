/// How many rows each derived table holds, kept (checksummed) beside them.
///
/// A store that can count a table's rows in O(1) — LMDB can — compares its
/// counts with the summary on every write and every read of derived data,
/// so that a row deleted or added behind msglog's back is noticed at once,
/// without a scan: a write must never compute an event from tables that
/// disagree with the log.
public struct LedgerSummary: Equatable, Sendable {
  /// Events in the log (its head seq).
  public var events: UInt64 = 0
  /// Rows of `heads`: streams with at least one event.
  public var streams: UInt64 = 0
  /// Rows of `ids`: every id ever inserted.
  public var ids: UInt64 = 0
  /// Rows of `order`: nodes of all order trees.
  public var nodes: UInt64 = 0
  /// Rows of `checkpoints`.
  public var checkpoints: UInt64 = 0

  public init(events: UInt64 = 0, streams: UInt64 = 0, ids: UInt64 = 0, nodes: UInt64 = 0, checkpoints: UInt64 = 0) {
    self.events = events
    self.streams = streams
    self.ids = ids
    self.nodes = nodes
    self.checkpoints = checkpoints
  }
}

/// The row counts a store finds in its tables (from `mdb_stat`, not a scan).
public struct TableCounts: Equatable, Sendable {
  public var events: UInt64
  /// The per-stream event index: one row per event.
  public var streamEvents: UInt64
  public var heads: UInt64
  public var ids: UInt64
  public var nodes: UInt64
  public var checkpoints: UInt64

  public init(events: UInt64, streamEvents: UInt64, heads: UInt64, ids: UInt64, nodes: UInt64, checkpoints: UInt64) {
    self.events = events
    self.streamEvents = streamEvents
    self.heads = heads
    self.ids = ids
    self.nodes = nodes
    self.checkpoints = checkpoints
  }
}

/// Cheap checks that the derived tables agree with the log, run before a
/// write computes anything from them and before a read serves them.
public enum Integrity {
  /// Compares the store's row counts with the summary, and the summary with
  /// the log's head. O(1): a handful of lookups.
  public static func checkCounts(_ reader: any LogReader) throws {
    guard let counts = try reader.tableCounts() else { return }
    try checkCounts(reader, counts: counts)
  }

  /// The same, with the counts already read.
  public static func checkCounts(_ reader: any LogReader, counts: TableCounts) throws {
    let head = try reader.headSeq()
    guard counts.events == head else {
      throw MsglogError.corruptedLog("the events table holds \(counts.events) records but its last seq is \(head)")
    }
    let summary = try reader.summary() ?? LedgerSummary()
    let pairs: [(String, UInt64, UInt64)] = [
      ("summary", summary.events, head),
      ("stream-events", counts.streamEvents, head),
      ("heads", counts.heads, summary.streams),
      ("ids", counts.ids, summary.ids),
      ("order", counts.nodes, summary.nodes),
      ("checkpoints", counts.checkpoints, summary.checkpoints),
    ]
    for (table, found, expected) in pairs where found != expected {
      let detail =
        table == "summary"
        ? "it counts \(found) events; the log has \(expected)"
        : "\(found) rows; there must be \(expected)"
      throw damaged(DerivedDamage(table: table, detail))
    }
  }

  /// Checks that the stream's head agrees with the log: its event index
  /// must end at the head's last seq, and that record must be the stream's
  /// event at the head's version. A stream without a head must have no
  /// indexed events. Reads one record.
  public static func checkHead(_ head: StreamHead?, of stream: StreamName, in reader: any LogReader) throws {
    let lastIndexed = try reader.lastStreamEvent(of: stream)
    guard let head else {
      if let lastIndexed {
        throw damaged(
          DerivedDamage(
            .heads, "stream \(TerminalText.quoted(stream)) has events (the last at seq \(lastIndexed)) but no head"))
      }
      return
    }
    guard head.version > 0, lastIndexed == head.lastSeq else {
      throw damaged(
        DerivedDamage(
          .heads,
          "the head of stream \(TerminalText.quoted(stream)) says its last event is seq \(head.lastSeq); "
            + "its event index says \(lastIndexed.map(String.init) ?? "none")"))
    }
    let name = stream.bytes
    let version: UInt64? = try name.withUnsafeBytes { name in
      try reader.withRecord(at: head.lastSeq) { bytes in
        do {
          return try EventRecord.positional(bytes, ifStream: name)?.version
        } catch {
          throw corruption(seq: head.lastSeq, "\(error)")
        }
      } ?? nil
    }
    guard version == head.version else {
      throw damaged(
        DerivedDamage(
          .heads,
          "the head of stream \(TerminalText.quoted(stream)) says seq \(head.lastSeq) is its version \(head.version); "
            + "the log says \(version.map { "version \($0)" } ?? "it is another stream's event")"))
    }
  }

  /// The error a command gets when derived data disagrees with the log.
  public static func damaged(_ damage: DerivedDamage) -> MsglogError { .derivedDamage(damage) }
}
