/// What a full replay keeps of a stream's inserts and edits as it passes
/// them, to make the live items at the end without reading the log again.
extension Replay {
  /// For each handle of the projection (`Projection.lastHandle`), the
  /// insert that made it, as a full replay passes it; and the stream's
  /// edits, whose text an edited item shows. The live items need no second
  /// read of the log: a slot whose text is its handle's insert (nearly
  /// every one) is found at once; a restored slot, or one whose text is an
  /// edit's, is looked up by seq.
  struct InsertedItems {
    /// Per handle, the record that made it (an insert's, or a restore's),
    /// as the scan checked it (`recordsStayMapped`): an insert's is
    /// decoded at the end if its item survives.
    var records: [UnsafeRawBufferPointer] = []
    /// Per handle, where the records do not stay mapped: the seq of the
    /// event that made it, and the insert's item (nil for a restore's).
    var seqs: [UInt64] = []
    var items: [Item?] = []
    /// The stream's edit records, decoded (rare next to inserts).
    var edits: [UInt64: EventRecord.TextRecord] = [:]

    /// The seq of the event that made `handle`: handles are made in seq
    /// order, so these ascend.
    @inline(__always)
    func seq(ofHandle handle: Int) -> UInt64 {
      guard !records.isEmpty else { return seqs[handle] }
      let record = records[handle]
      return record.loadBigEndian(fromByteOffset: record[0] == EventRecord.formatVersion4 ? 3 : 2, as: UInt64.self)
    }

    /// The item inserted at `seq`: `handle`'s when its insert is that one,
    /// else found by binary search on the handles' seqs.
    func inserted(_ seq: UInt64, id: ItemID, handle: UInt32) throws(MsglogError) -> Item? {
      var found = Int(handle)
      if self.seq(ofHandle: found) != seq {
        var lo = 0
        var hi = records.isEmpty ? seqs.count : records.count
        while lo < hi {
          let mid = (lo + hi) / 2
          if self.seq(ofHandle: mid) < seq { lo = mid + 1 } else { hi = mid }
        }
        guard lo < (records.isEmpty ? seqs.count : records.count), self.seq(ofHandle: lo) == seq else { return nil }
        found = lo
      }
      let item: Item
      if records.isEmpty {
        guard let kept = items[found] else { return nil }
        item = kept
      } else {
        guard records[found][1] == EventRecord.opInsert else { return nil }
        // The frame (or the whole record) was checked by `fold` as the
        // replay passed it, and is unchanged since (`recordsStayMapped`:
        // nothing rewrites the snapshot's pages); a framed body is checked now.
        do { item = try EventRecord.insertedItem(records[found], verifyingChecksum: false) } catch {
          throw corruption(seq: seq, "\(error)")
        }
      }
      guard item.id == id else { throw corruption(seq: seq, "it is not the insert of \(id.text)") }
      return item
    }

    /// The items of the projection's slots, in order.
    func items(_ projection: Projection) throws -> [Item] {
      var out: [Item] = []
      out.reserveCapacity(projection.count)
      try forEachItem(projection) { out.append($0.item) }
      return out
    }

    /// Lends the items of the projection's slots, in order: an insert's
    /// item (from its record, where it stays mapped), or an edit's text on
    /// its insert's item.
    func forEachItem(_ projection: Projection, _ body: (ItemBytes) throws -> Void) throws {
      try projection.forEachHandle { handle, slot in
        if !records.isEmpty, records[Int(handle)][1] == EventRecord.opInsert, seq(ofHandle: Int(handle)) == slot.seq {
          let text: EventRecord.TextBytes
          do { text = try EventRecord.textBytes(records[Int(handle)], verifyingChecksum: false) } catch {
            throw corruption(seq: slot.seq, "\(error)")
          }
          guard case .insert(let item) = text, item.id == slot.id else {
            throw corruption(seq: slot.seq, "it is not the insert of \(slot.id.text)")
          }
          try body(item)
          return
        }
        if let item = try inserted(slot.seq, id: slot.id, handle: handle) {
          try ItemBytes.lending(item, body)
          return
        }
        guard case .edit(let id, let text, let time, let insertSeq)? = edits[slot.seq], id == slot.id,
          var item = try inserted(insertSeq, id: slot.id, handle: handle)
        else {
          throw corruption(seq: slot.seq, "it is not the text of \(slot.id.text)")
        }
        item.text = text
        item.edited = time
        try ItemBytes.lending(item, body)
      }
    }
  }
}
