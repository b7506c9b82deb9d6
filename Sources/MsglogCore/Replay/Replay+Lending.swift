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
    if seq == nil {
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
  /// seq order (batched), then, for an edited item, its insert's.
  package static func forEachItem(_ slots: [Slot], in reader: any LogReader, _ body: (ItemBytes) throws -> Void)
    throws
  {
    guard reader.recordsStayMapped else {
      for item in try items(slots, in: reader) { try ItemBytes.lending(item, body) }
      return
    }
    // The records stay where they are until the transaction ends: read
    // them in seq order, lend them in list order.
    var texts: [EventRecord.TextBytes?] = Array(repeating: nil, count: slots.count)
    var edited: [(seq: UInt64, tag: Int)] = []
    try read(slots.indices.map { (slots[$0].seq, $0) }, in: reader) { seq, bytes, position in
      let text: EventRecord.TextBytes
      do { text = try EventRecord.textBytes(bytes, verifyingChecksum: true) } catch {
        throw corruption(seq: seq, "\(error)")
      }
      guard text.id == slots[position].id else { throw corruption(seq: seq, "it is not the text of \(slots[position].id.text)") }
      if case .insert(let item) = text, item.seq != seq {
        throw corruption(seq: seq, "it is not the insert of \(slots[position].id.text)")
      }
      if case .edit(_, _, _, let inserted) = text { edited.append((inserted, position)) }
      texts[position] = text
    }
    var inserts: [Int: ItemBytes] = [:]
    if !edited.isEmpty {
      try read(edited, in: reader) { seq, bytes, position in
        let id = slots[position].id
        let insert: EventRecord.TextBytes
        do { insert = try EventRecord.textBytes(bytes, verifyingChecksum: true) } catch {
          throw corruption(seq: seq, "\(error)")
        }
        guard case .insert(let item) = insert, item.id == id, item.seq == seq else {
          throw corruption(seq: seq, "it is not the insert of \(id.text)")
        }
        inserts[position] = item
      }
    }
    for position in slots.indices {
      switch texts[position] {
      case .insert(let item)?:
        try body(item)
      case .edit(_, let text, let time, _)?:
        guard var item = inserts[position] else {
          throw corruption(seq: slots[position].seq, "the insert of \(slots[position].id.text) is missing")
        }
        item.text = text
        item.edited = time
        try body(item)
      case nil:
        throw corruption(seq: slots[position].seq, "the text of \(slots[position].id.text) is missing")
      }
    }
  }
}
