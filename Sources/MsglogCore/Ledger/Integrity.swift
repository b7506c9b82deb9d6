/// Cheap checks that the derived tables agree with the log, run before a
/// write computes anything from them and before a read serves them.
package enum Integrity {
  /// Compares the store's row counts with the summary, and the summary with
  /// the log's head. O(1): a handful of lookups.
  package static func checkCounts(_ reader: any LogReader) throws {
    guard let counts = try reader.tableCounts() else { return }
    try checkCounts(reader, counts: counts)
  }

  /// The same, with the counts already read.
  package static func checkCounts(_ reader: any LogReader, counts: TableCounts) throws {
    let head = try reader.headSeq()
    guard counts.events == head else {
      throw MsglogError.corruptedLog("the events table holds \(counts.events) records but its last seq is \(head)")
    }
    let summary = try reader.summary() ?? RecordedCounts()
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
  package static func checkHead(_ head: StreamHead?, of stream: StreamName, in reader: any LogReader) throws {
    let lastIndexed = try reader.lastStreamEvent(of: stream)
    guard let head else {
      if let lastIndexed {
        throw damaged(
          DerivedDamage(
            .heads, "stream \(TerminalText.quoted(stream)) has events (the last at seq \(lastIndexed)) but no head"))
      }
      return
    }
    // A stream with no event since a trim's horizon: its base stands for them.
    if head.version > 0, lastIndexed == nil, head.lastSeq < (try reader.horizon().seq) {
      guard let base = try reader.bases().first(where: { $0.stream == stream }), base.version == head.version else {
        throw damaged(
          DerivedDamage(
            .heads, "the head of stream \(TerminalText.quoted(stream)) is at version \(head.version), before "
              + "the horizon, where its base is not"))
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
  package static func damaged(_ damage: DerivedDamage) -> MsglogError { .derivedDamage(damage) }
}
