/// Rebuilds a stream's items from the log alone, as they were after any seq.
package enum Replay {
  /// The stream's items right after event `seq`; with no seq, a full replay
  /// of the log up to the head.
  ///
  /// A full replay is one cursor pass over the log from seq 1: every
  /// record's checksum is checked, the stream's events are folded into an
  /// O(log n) projection without decoding their text, and only the items
  /// still live at the end are read in full.
  ///
  /// With a seq, the replay starts from the stream's latest checkpoint at or
  /// before it and folds only the stream's own events after that (found
  /// through the per-stream event index), so its cost depends on the size of
  /// the stream, not on where the seq lies or on other streams' events.
  ///
  /// Refuses a seq beyond the head; a stream that did not exist yet replays
  /// as empty. A damaged record or an event that does not fit stops the
  /// replay with an error that names its seq.
  package static func stream(_ stream: StreamName, at seq: UInt64?, in reader: any LogReader) throws
    -> StreamContents
  {
    let head = try reader.headSeq()
    let target = seq ?? head
    guard target <= head else { throw MsglogError.seqBeyondHead(seq: target, head: head) }
    // A trimmed log replays from its bases, which are checkpoints.
    if seq == nil, try !reader.horizon().isTrimmed {
      let (projection, inserted) = try fullReplay(stream, through: target, in: reader)
      return StreamContents(
        stream: stream, seq: target, version: projection.version, items: try inserted.items(projection))
    }
    let projection = try replayFromCheckpoint(stream, through: target, in: reader)
    return StreamContents(
      stream: stream, seq: target, version: projection.version, items: try items(projection.slots, in: reader))
  }

  /// One cursor pass over the log: every record checked, the stream's events
  /// folded by position, the bodies of its inserts kept for the end.
  static func fullReplay(_ stream: StreamName, through target: UInt64, in reader: any LogReader) throws
    -> (Projection, InsertedItems)
  {
    guard target > 0 else { return (Projection(), InsertedItems()) }
    let keepRecords = reader.recordsStayMapped
    // Where the records stay mapped (LMDB, where reading a stream's head
    // is a lookup in the same snapshot and cannot abort the transaction),
    // room for as many handles as the stream has events — its head says
    // how many: derived, so only a hint — so that the tables the fold
    // fills are not copied and faulted in again each time they double.
    let events =
      keepRecords ? (try? reader.streamHead(stream)).flatMap { $0 }.map { Int(min($0.version, target)) } ?? 0 : 0
    var projection = Projection(reservingHandles: events)
    var inserted = InsertedItems()
    let name = stream.bytes
    if keepRecords { inserted.records.reserveCapacity(events) }
    try name.withUnsafeBytes { name in
      try reader.forEachRecord(from: 1) { recordSeq, bytes in
        switch try fold(bytes, seq: recordSeq, stream: name, into: &projection) {
        case .insert, .restore:
          // The record that made the projection's new handle.
          if keepRecords {
            inserted.records.append(bytes)
          } else {
            inserted.seqs.append(recordSeq)
            // Checked by `fold` just now; decode the body without checking again.
            do {
              inserted.items.append(
                bytes[1] == EventRecord.opInsert ? try EventRecord.insertedItem(bytes, verifyingChecksum: false) : nil)
            } catch {
              throw corruption(seq: recordSeq, "\(error)")
            }
          }
        case .edit:
          do { inserted.edits[recordSeq] = try EventRecord.textRecord(bytes, verifyingChecksum: false) } catch {
            throw corruption(seq: recordSeq, "\(error)")
          }
        case .skipped, .other: break
        }
        return recordSeq < target
      }
    }
    return (projection, inserted)
  }

  static func replayFromCheckpoint(_ stream: StreamName, through target: UInt64, in reader: any LogReader) throws
    -> Projection
  {
    // Below a trimmed log's bases there is nothing to replay from.
    try reader.horizon().check(listAfter: target)
    // Checkpoints and the event index are derived: check them before use.
    try Integrity.checkCounts(reader)
    let head = try reader.streamHead(stream)
    try Integrity.checkHead(head, of: stream, in: reader)
    var projection = Projection()
    var from: UInt64 = 1
    if let checkpoint = try reader.checkpoint(of: stream, atOrBefore: target) {
      projection = Projection(slots: checkpoint.slots, version: checkpoint.version)
      from = checkpoint.seq + 1
    }
    // The stream's events after the checkpoint, fetched in batches (one
    // request each, for a store across a network), folded in seq order.
    var seqs: [UInt64] = []
    try reader.forEachStreamEvent(of: stream, from: from) { seq in
      guard seq <= target else { return false }
      seqs.append(seq)
      return true
    }
    let name = stream.bytes
    try name.withUnsafeBytes { name in
      for start in stride(from: 0, to: seqs.count, by: batchSize) {
        let batch = Array(seqs[start..<min(start + batchSize, seqs.count)])
        var next = 0
        try reader.forEachRecord(at: batch) { seq, bytes in
          guard seq == batch[next] else { throw missingFromIndex(seq: batch[next], stream: stream, found: nil) }
          next += 1
          let found = try fold(bytes, seq: seq, stream: name, into: &projection)
          guard found != .skipped else { throw missingFromIndex(seq: seq, stream: stream, found: found) }
        }
        guard next == batch.count else { throw missingFromIndex(seq: batch[next], stream: stream, found: nil) }
      }
    }
    // At or past the stream's last event, the replay must have reached its head.
    if let head, target >= head.lastSeq, projection.version != head.version {
      throw Integrity.damaged(
        DerivedDamage(
          table: "stream-events",
          "the index of stream \(TerminalText.quoted(stream)) replays to version \(projection.version); "
            + "the stream is at \(head.version)"))
    }
    return projection
  }

  /// How many records one batched request asks for.
  static let batchSize = 4096

  static func missingFromIndex(seq: UInt64, stream: StreamName, found: Folded?) -> MsglogError {
    Integrity.damaged(
      DerivedDamage(
        table: "stream-events",
        "the index of stream \(TerminalText.quoted(stream)) names seq \(seq), "
          + (found == nil ? "which is not in the log" : "which is another stream's event")))
  }

  enum Folded { case skipped, insert, edit, restore, other }

  /// Checks one record and, when it belongs to the stream, folds it in.
  @inline(__always)
  @discardableResult
  static func fold(
    _ bytes: UnsafeRawBufferPointer, seq: UInt64, stream: UnsafeRawBufferPointer, into projection: inout Projection
  ) throws -> Folded {
    let event: PositionalEvent?
    do {
      event = try EventRecord.positional(bytes, ifStream: stream)
    } catch {
      throw corruption(seq: seq, "\(error)")
    }
    guard let event else { return .skipped }
    guard event.seq == seq else { throw corruption(seq: seq, "record holds seq \(event.seq)") }
    do { try projection.apply(event) } catch { throw MsglogError.eventDoesNotFit(seq: error.seq, reason: error.reason) }
    switch event.change {
    case .insert: return .insert
    case .edit: return .edit
    case .restore: return .restore
    case .remove, .move, .erase, .unsign: return .other
    }
  }

  /// The full items of `slots`, from their text records (an insert, or an
  /// edit and then its insert), fetched in batches in seq order (one request
  /// each for a store across a network; on LMDB mostly sequential cursor steps).
  package static func items(_ slots: [Slot], in reader: any LogReader) throws -> [Item] {
    var items: [Item?] = Array(repeating: nil, count: slots.count)
    /// Edited items: their position, and the edit's text, time and insert.
    var edited: [(position: Int, text: String, time: Timestamp, insertSeq: UInt64)] = []
    try read(slots.indices.map { (slots[$0].seq, $0) }, in: reader) { seq, bytes, position in
      switch try textRecord(bytes, seq: seq, id: slots[position].id) {
      case .insert(let item):
        guard item.seq == seq else { throw corruption(seq: seq, "it is not the insert of \(slots[position].id.text)") }
        items[position] = item
      case .edit(_, let text, let time, let insertSeq):
        edited.append((position, text, time, insertSeq))
      }
    }
    if !edited.isEmpty {
      try read(edited.indices.map { (edited[$0].insertSeq, $0) }, in: reader) { seq, bytes, n in
        let edit = edited[n]
        let id = slots[edit.position].id
        guard case .insert(var item) = try textRecord(bytes, seq: seq, id: id), item.seq == seq else {
          throw corruption(seq: seq, "it is not the insert of \(id.text)")
        }
        item.text = edit.text
        item.edited = edit.time
        items[edit.position] = item
      }
    }
    var result: [Item] = []
    result.reserveCapacity(items.count)
    for (position, item) in items.enumerated() {
      guard let item else {
        throw corruption(seq: slots[position].seq, "the text of \(slots[position].id.text) is missing")
      }
      result.append(item)
    }
    return result
  }

  /// Reads the records at the seqs of `wanted` (seq, tag) in batches in seq
  /// order, calling `body` with each and its tag.
  static func read(
    _ wanted: [(seq: UInt64, tag: Int)], in reader: any LogReader,
    _ body: (UInt64, UnsafeRawBufferPointer, Int) throws -> Void
  ) throws {
    let bySeq = wanted.sorted { $0.seq < $1.seq }
    for start in stride(from: 0, to: bySeq.count, by: batchSize) {
      let batch = bySeq[start..<min(start + batchSize, bySeq.count)]
      var next = batch.startIndex
      try reader.forEachRecord(at: batch.map(\.seq)) { seq, bytes in
        // The store skips a seq it lacks (the caller finds it missing); a
        // seq asked for twice comes once.
        while next < batch.endIndex, batch[next].seq < seq { next += 1 }
        while next < batch.endIndex, batch[next].seq == seq {
          try body(seq, bytes, batch[next].tag)
          next += 1
        }
      }
    }
  }

  /// An insert or edit record, checked to be the text of `id`.
  static func textRecord(_ bytes: UnsafeRawBufferPointer, seq: UInt64, id: ItemID) throws -> EventRecord.TextRecord {
    let record: EventRecord.TextRecord
    do { record = try EventRecord.textRecord(bytes, verifyingChecksum: true) } catch {
      throw corruption(seq: seq, "\(error)")
    }
    guard record.id == id else { throw corruption(seq: seq, "it is not the text of \(id.text)") }
    return record
  }
}
