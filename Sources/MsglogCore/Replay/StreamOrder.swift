/// A stream's list without its texts: the counters and, for each item in
/// order, its id and the seq of the record that holds its text. A few dozen
/// bytes an item, whatever the texts weigh, so a server can hold the list it
/// answers from while a slow client takes the texts a few at a time
/// (`Replay.items(_:in:)` fetches them: records never change, so any later
/// read gives the texts the list had).
package struct StreamOrder: Sendable {
  /// The stream's counters as of `header.seq`; its `items` are empty.
  package var header: StreamContents
  package var slots: [Slot]
}

extension Replay {
  /// The stream's order now (from the derived order, checked as a list
  /// read checks it), or right after `seq` (replayed from its latest
  /// checkpoint, as `replay --at` does).
  package static func order(of stream: StreamName, at seq: UInt64?, in reader: any LogReader) throws -> StreamOrder {
    let head = try reader.headSeq()
    if let seq {
      guard seq <= head else { throw MsglogError.seqBeyondHead(seq: seq, head: head) }
      let projection = try replayFromCheckpoint(stream, through: seq, in: reader)
      return StreamOrder(
        header: StreamContents(stream: stream, seq: seq, version: projection.version, items: []),
        slots: projection.slots)
    }
    try Integrity.checkCounts(reader)
    let streamHead = try reader.streamHead(stream)
    try Integrity.checkHead(streamHead, of: stream, in: reader)
    var slots: [Slot] = []
    if let streamHead {
      slots.reserveCapacity(Int(streamHead.count))
      try StoredOrder.forEachLeafBatch(of: streamHead, in: reader) { slots += $0 }
    }
    guard slots.count == Int(streamHead?.count ?? 0) else {
      throw MsglogError.derivedDamage(
        DerivedDamage(
          .order,
          "the order of stream \(TerminalText.quoted(stream)) holds \(slots.count) items, "
            + "its head says \(streamHead?.count ?? 0)"))
    }
    return StreamOrder(
      header: StreamContents(stream: stream, seq: head, version: streamHead?.version ?? 0, items: []), slots: slots)
  }

  /// The full items of a run of slots, in their order.
  package static func items(_ slots: ArraySlice<Slot>, in reader: any LogReader) throws -> [Item] {
    try items(Array(slots), in: reader)
  }
}
