/// The stream as it is now, read from the derived tables rather than replayed.
package enum CurrentView {
  /// The stream's counters and item count, then its items one by one in
  /// order: one leaf of the order tree in memory at a time, so `list` of a
  /// million items needs no more memory than `list` of ten.
  package static func forEachItem(
    of stream: StreamName, in reader: any LogReader, header: (StreamContents, Int) throws -> Void,
    _ body: (Int, Item) throws -> Void
  ) throws {
    try forEachItemBytes(of: stream, in: reader, header: header) { index, item in try body(index, item.item) }
  }

  /// `forEachItem`, each item lent as its records' bytes (a batch of
  /// leaves' items at a time).
  package static func forEachItemBytes(
    of stream: StreamName, in reader: any LogReader, header: (StreamContents, Int) throws -> Void,
    _ body: (Int, ItemBytes) throws -> Void
  ) throws {
    try Integrity.checkCounts(reader)
    let seq = try reader.headSeq()
    let head = try reader.streamHead(stream)
    try Integrity.checkHead(head, of: stream, in: reader)
    let count = Int(head?.count ?? 0)
    try header(StreamContents(stream: stream, seq: seq, version: head?.version ?? 0, items: []), count)
    var index = 0
    if let head {
      try StoredOrder.forEachLeafBatch(of: head, in: reader) { slots in
        try Replay.forEachItem(slots, in: reader) { item in
          try body(index, item)
          index += 1
        }
      }
    }
    guard index == count else {
      throw MsglogError.derivedDamage(
        DerivedDamage(
          .order, "the order of stream \(TerminalText.quoted(stream)) holds \(index) items, its head says \(count)"))
    }
  }

  /// Every stream's head, in bytewise order of the names, after checking
  /// that the table holds the rows it must.
  package static func streams(in reader: any LogReader) throws -> [StreamHead] {
    try Integrity.checkCounts(reader)
    return try reader.streamHeads()
  }

  /// The whole stream as a snapshot (tests and small streams).
  package static func stream(_ stream: StreamName, in reader: any LogReader) throws -> StreamContents {
    var snapshot = StreamContents(stream: stream, seq: 0, version: 0, items: [])
    try forEachItem(of: stream, in: reader, header: { header, _ in snapshot = header }) { _, item in
      snapshot.items.append(item)
    }
    return snapshot
  }
}
