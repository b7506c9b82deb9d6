/// Rebuilds a stream's items from the log alone, as they were after any seq.
public enum Replay {
  /// The stream's items right after event `seq` (the head when nil).
  ///
  /// One cursor pass over the log from seq 1: every record's checksum is
  /// checked, the stream's events are folded into an O(log n) projection
  /// without decoding their text, and only the items still live at the end
  /// are read in full. Refuses a seq beyond the head; a stream that did not
  /// exist yet replays as empty. A damaged record or an event that does not
  /// fit stops the replay with an error that names its seq.
  public static func stream(_ stream: String, at seq: UInt64?, in reader: any LogReader) throws
    -> StreamSnapshot
  {
    let head = try reader.headSeq()
    let target = seq ?? head
    guard target <= head else {
      throw MsglogError.refused(
        "seq \(target) is beyond the head of the log (\(head))",
        hint: head == 0 ? "the log is empty" : "give a seq from 0 to \(head)")
    }
    var projection = Projection()
    if target > 0 {
      let name = Array(stream.utf8)
      try name.withUnsafeBytes { name in
        try reader.forEachRecord(from: 1) { recordSeq, bytes in
          let event: PositionalEvent?
          do {
            event = try EventRecord.positional(bytes, ifStream: name)
          } catch {
            throw corruption(seq: recordSeq, "\(error)")
          }
          if let event {
            guard event.seq == recordSeq else { throw corruption(seq: recordSeq, "record holds seq \(event.seq)") }
            do { try projection.apply(event) } catch { throw MsglogError.refused("\(error)") }
          }
          return recordSeq < target
        }
      }
    }
    return StreamSnapshot(
      stream: stream, seq: target, version: projection.version, items: try items(projection.slots, in: reader))
  }

  /// The full items of `slots`, from their insert records.
  ///
  /// When the inserts lie close together in the log (a dense range of seqs),
  /// one more cursor pass over that range reads them in log order, which is
  /// far cheaper than a B-tree lookup per item; the records were checksummed
  /// by the first pass in this same transaction. Otherwise each is looked up.
  public static func items(_ slots: OrderedList<Slot>, in reader: any LogReader) throws -> [Item] {
    let order = slots.elements
    guard var lo = order.first?.seq else { return [] }
    var hi = lo
    for slot in order {
      lo = min(lo, slot.seq)
      hi = max(hi, slot.seq)
    }
    let span = Int(hi - lo) + 1
    guard span <= max(16 * order.count, 1 << 16) else {
      return try order.map { try item($0, in: reader) }
    }
    var position = [Int32](repeating: -1, count: span)
    for index in order.indices { position[Int(order[index].seq - lo)] = Int32(index) }
    var items: [Item] = []
    items.reserveCapacity(order.count)
    var found = 0
    try position.withUnsafeBufferPointer { position in
      try reader.forEachRecord(from: lo) { seq, bytes in
        let index = Int(position[Int(seq - lo)])
        if index >= 0 {
          let slot = order[index]
          let item: Item
          do { item = try EventRecord.insertedItem(bytes) } catch { throw corruption(seq: seq, "\(error)") }
          guard item.id == slot.id, item.seq == seq else {
            throw corruption(seq: seq, "it is not the insert of \(slot.id.text)")
          }
          // Records come in seq order, items are wanted in list order: place
          // each at its index, filling the gaps later entries will overwrite.
          while items.count <= index { items.append(item) }
          items[index] = item
          found += 1
        }
        return seq < hi
      }
    }
    guard found == order.count else { throw MsglogError.refused("corrupted log: \(order.count - found) inserts are missing") }
    return items
  }

  static func item(_ slot: Slot, in reader: any LogReader) throws -> Item {
    guard let event = try reader.event(at: slot.seq), case .insert(let id, _, let text, let sender) = event.op,
      id == slot.id
    else {
      throw corruption(seq: slot.seq, "it is not the insert of \(slot.id.text)")
    }
    return Item(id: id, text: text, sender: sender, time: event.time, seq: event.seq)
  }
}

/// The stream as it is now, read from the derived tables rather than replayed.
public enum CurrentView {
  public static func stream(_ stream: String, in reader: any LogReader) throws -> StreamSnapshot {
    let seq = try reader.headSeq()
    guard let head = try reader.streamHead(stream) else {
      return StreamSnapshot(stream: stream, seq: seq, version: 0, items: [])
    }
    var items: [Item] = []
    items.reserveCapacity(Int(head.count))
    for id in try reader.order(of: stream) {
      items.append(try item(id, in: reader))
    }
    return StreamSnapshot(stream: stream, seq: seq, version: head.version, items: items)
  }

  /// An item's body, from the insert event the id index points at.
  static func item(_ id: ItemID, in reader: any LogReader) throws -> Item {
    guard let entry = try reader.idEntry(id), let event = try reader.event(at: entry.insertSeq),
      case .insert(let insertedID, _, let text, let sender) = event.op, insertedID == id
    else {
      throw MsglogError.refused(
        "the id index has no valid insert for \(id.text)",
        hint: "run 'msglog verify' to see what differs from the log")
    }
    return Item(id: id, text: text, sender: sender, time: event.time, seq: event.seq)
  }
}
