/// Items lent as their records' bytes (`ItemBytes`), for a reader that
/// writes them out at once (`list`, `replay`): no `Item` is made where the
/// records stay mapped.
extension Replay {
  /// `stream(_:at:in:)`, item by item: `header` first (the contents with
  /// no items, and the count), then each item with its index.
  package static func forEachItem(
    of stream: StreamName, at seq: UInt64?, in reader: any LogReader,
    header: (StreamContents, Int) throws -> Void, _ body: (Int, ItemBytes) throws -> Void
  ) throws {
    let head = try reader.headSeq()
    let target = seq ?? head
    guard target <= head else { throw MsglogError.seqBeyondHead(seq: target, head: head) }
    var index = 0
    // A trimmed log replays from its bases, which are checkpoints.
    if seq == nil, try !reader.horizon().isTrimmed {
      let (projection, inserted) = try fullReplay(stream, through: target, in: reader)
      try header(StreamContents(stream: stream, seq: target, version: projection.version, items: []), projection.count)
      try inserted.forEachItem(projection) { item in
        try body(index, item)
        index += 1
      }
      return
    }
    let projection = try replayFromCheckpoint(stream, through: target, in: reader)
    try header(StreamContents(stream: stream, seq: target, version: projection.version, items: []), projection.count)
    try forEachItem(projection.slots, in: reader) { item in
      try body(index, item)
      index += 1
    }
  }

  /// The items of `slots`, lent in their order: their text records read in
  /// seq order, then, for an edited item, its insert's.
  package static func forEachItem(_ slots: [Slot], in reader: any LogReader, _ body: (ItemBytes) throws -> Void)
    throws
  {
    guard reader.recordsStayMapped, slots.count <= 1 << placeBits, !slots.contains(where: { $0.seq >> 50 != 0 }) else {
      for item in try items(slots, in: reader) { try ItemBytes.lending(item, body) }
      return
    }
    // The records stay where they are until the transaction ends: read
    // them in seq order (each seq and its place in one word, sorted),
    // lend them in list order.
    let records = try Self.records(at: slots.lazy.map(\.seq), in: reader)
    var inserts: [UnsafeRawBufferPointer] = []
    if records.contains(where: { $0.count > 1 && $0[1] == EventRecord.opEdit }) {
      // An edited item's sender, time and seq are its insert's.
      inserts = try Self.records(
        at: records.lazy.map { $0.count > 1 && $0[1] == EventRecord.opEdit ? Self.insertSeq(ofEdit: $0) : 0 },
        in: reader)
    }
    for position in slots.indices {
      let slot = slots[position]
      let record = records[position]
      guard !record.isEmpty else { throw corruption(seq: slot.seq, "the text of \(slot.id.text) is missing") }
      let text: EventRecord.TextBytes
      do { text = try EventRecord.textBytes(record, verifyingChecksum: true) } catch {
        throw corruption(seq: slot.seq, "\(error)")
      }
      switch text {
      case .insert(let item):
        guard item.id == slot.id, item.seq == slot.seq else {
          throw corruption(seq: slot.seq, "it is not the insert of \(slot.id.text)")
        }
        try body(item)
      case .edit(let id, let edited, let time, let insertSeq):
        guard id == slot.id else { throw corruption(seq: slot.seq, "it is not the text of \(slot.id.text)") }
        let insert: EventRecord.TextBytes
        do { insert = try EventRecord.textBytes(inserts[position], verifyingChecksum: true) } catch {
          throw corruption(seq: insertSeq, inserts[position].isEmpty ? "the insert of \(id.text) is missing" : "\(error)")
        }
        guard case .insert(var item) = insert, item.id == id, item.seq == insertSeq else {
          throw corruption(seq: insertSeq, "it is not the insert of \(id.text)")
        }
        item.text = edited
        item.edited = time
        try body(item)
      }
    }
  }

  /// How many bits of a sort key hold a slot's place in its batch: a
  /// batch of leaves holds 16,384 slots at most (`StoredOrder`).
  static let placeBits = 14

  /// The records at `seqs` (0: none wanted), by place, read in seq order;
  /// a seq the log lacks gives an empty buffer.
  static func records<S: Collection>(at seqs: S, in reader: any LogReader) throws -> [UnsafeRawBufferPointer]
  where S.Element == UInt64 {
    var keys: [UInt64] = []
    keys.reserveCapacity(seqs.count)
    for (place, seq) in seqs.enumerated() where seq != 0 { keys.append(seq << placeBits | UInt64(place)) }
    keys.sort()
    let mask: UInt64 = (1 << placeBits) - 1
    var records = [UnsafeRawBufferPointer](repeating: UnsafeRawBufferPointer(start: nil, count: 0), count: seqs.count)
    var sorted = keys
    for k in sorted.indices { sorted[k] >>= placeBits }
    try sorted.withUnsafeBufferPointer { ascending in
      try reader.forEachRecord(ascending: ascending) { k, bytes in records[Int(keys[k] & mask)] = bytes }
    }
    return records
  }

  /// The seq of the insert an edit record names (checked when the record is read).
  static func insertSeq(ofEdit record: UnsafeRawBufferPointer) -> UInt64 {
    let framed = record[0] == EventRecord.formatVersion4
    let header = framed ? EventRecord.framedHeaderSize : EventRecord.headerSize
    let nameAt = framed ? 43 : 42
    guard record.count >= header + 4 else { return 0 }
    let offset = header + Int(record.loadBigEndian(fromByteOffset: nameAt, as: UInt16.self)) + 16
    guard offset + 8 <= record.count else { return 0 }
    return record.loadBigEndian(fromByteOffset: offset, as: UInt64.self)
  }
}
