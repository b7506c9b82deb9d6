/// A base that does not fit, and which of the bases it is (an import
/// names its line; a replica, the remote that sent it).
package struct BaseFault: Error {
  /// Its index among the bases (the import's line, less one).
  package var index: Int
  package var error: MsglogError
}

/// A log that starts from bases (`StreamBase`): an import of a trimmed
/// log's export, or a rebuild of a trimmed log's derived tables. Each
/// stream's list, as its base says, is planted in the session; the next
/// event is the horizon's.
extension LedgerSession {
  /// Writes the bases into an empty log: for each item its insert record
  /// under its seq (and, for an edited one, an edit under its `textSeq`,
  /// holding the text), its stream's order, head, id entries and
  /// checkpoint at the seq before the horizon; then the horizon and the
  /// bases themselves.
  ///
  /// - Throws: `BaseFault` (the base that fails: the later of two that
  ///   name one stream or one item, or for an item a base retires, that
  ///   base), holding `MsglogError.invalidInput` for bases
  ///   that disagree (seqs, a stream twice, an id twice, a seq not below
  ///   the horizon, a log that has events already).
  package func seed(_ bases: [ImportedBase]) throws {
    var at = 0
    do {
      try seed(bases, at: &at)
    } catch let error as MsglogError {
      throw BaseFault(index: at, error: error)
    }
  }

  /// `seed`, keeping in `at` the index of the base it is at.
  private func seed(_ bases: [ImportedBase], at: inout Int) throws {
    func bad(_ reason: String) -> MsglogError { .invalidInput(.write("a base line \(reason)")) }
    guard let first = bases.first else { return }
    guard nextSeq == 1, try writer.headSeq() == 0 else { throw bad("goes into an empty database only") }
    let horizon = first.seq + 1
    var seqs = Set<UInt64>()
    var ids = Set<ItemID>()
    var rows: [StreamBase] = []
    var retired: [RetiredItem] = []
    for (index, base) in bases.enumerated() {
      at = index
      guard base.seq == first.seq else { throw bad("names seq \(base.seq), another names \(first.seq)") }
      guard !rows.contains(where: { $0.stream == base.stream }) else {
        throw bad("names stream \(TerminalText.quoted(base.stream)) twice")
      }
      guard UInt64(base.items.count) <= base.version else {
        throw bad("of stream \(TerminalText.quoted(base.stream)) has more items than events")
      }
      var slots: [Slot] = []
      for (index, item) in base.items.enumerated() {
        guard try idEntry(item.id) == nil, ids.insert(item.id).inserted else {
          throw MsglogError.idAlreadyUsed(item.id, insertSeq: item.seq)
        }
        let textSeq = base.textSeqs[index]
        for seq in [item.seq] + (textSeq.map { [$0] } ?? []) {
          guard seq > 0, seq < horizon, seqs.insert(seq).inserted else {
            throw bad("names seq \(seq) twice, or not before its horizon \(horizon)")
          }
        }
        // The text and sender every write is held to (an erased item has neither).
        if item.erased == nil {
          try Limits.check(
            .insert(id: item.id, index: UInt64(index), text: item.text, sender: item.sender), time: item.time,
            origin: nil)
        }
        // The insert holds the sender and time; an edit after it, the text.
        let text = item.erased == nil ? item.text : ""
        let insert = Event(
          seq: item.seq, stream: base.stream, version: base.version, time: item.time,
          op: .insert(
            id: item.id, index: UInt64(index), text: textSeq == nil ? text : "",
            sender: item.erased == nil ? item.sender : nil),
          erased: item.erased)
        try writer.replaceRecord(EventRecord.encode(insert, layout: writer.recordLayout), of: insert)
        if let textSeq {
          let edit = Event(
            seq: textSeq, stream: base.stream, version: base.version, time: item.edited ?? item.time,
            op: .edit(
              id: item.id, text: text, sender: nil, index: UInt64(index), replaces: item.seq, inserted: item.seq),
            erased: item.erased)
          try writer.replaceRecord(EventRecord.encode(edit, layout: writer.recordLayout), of: edit)
        }
        slots.append(Slot(id: item.id, seq: textSeq ?? item.seq))
      }
      let row = StreamBase(stream: base.stream, seq: first.seq, version: base.version, slots: slots)
      try plant(row, insertSeqs: base.items.map(\.seq))
      rows.append(row)
      retired += base.retired
    }
    // Once every base's items are known: each retired item's insert and
    // remove are seqs of their own, below the horizon, as a trim leaves them.
    var retiredSeqs = Set<UInt64>()
    // (A retired item's fault is its base's: the line that retires it.)
    let baseIndex = Dictionary(bases.enumerated().map { ($1.stream, $0) }) { first, _ in first }
    for item in retired {
      at = baseIndex[item.stream] ?? 0
      guard ids.insert(item.id).inserted, try idEntry(item.id) == nil else {
        throw MsglogError.idAlreadyUsed(item.id, insertSeq: item.insertSeq)
      }
      guard 0 < item.insertSeq, item.insertSeq < item.removeSeq, item.removeSeq < horizon,
        !seqs.contains(item.insertSeq), !seqs.contains(item.removeSeq),
        retiredSeqs.insert(item.insertSeq).inserted, retiredSeqs.insert(item.removeSeq).inserted
      else { throw bad("retires \(item.id.text) at seqs no trim leaves") }
    }
    try retire(retired)
    at = 0
    let trimmed = Horizon(
      seq: horizon, droppedEvents: horizon - 1 - UInt64(seqs.count), droppedStreamEvents: horizon - 1)
    guard
      try writer.putTrimmedHistory(
        trimmed, bases: rows.sorted { $0.stream.bytes.lexicographicallyPrecedes($1.stream.bytes) }, retired: retired)
    else { throw MsglogError.invalidInput(.write("a base line goes into an LMDB or a PostgreSQL database only")) }
    nextSeq = horizon
  }

  /// A rebuild of a trimmed log's derived tables (`verify --repair`)
  /// starts from its stored bases, as a replay does, each item's insert
  /// read from the record its base names (an edit names its insert).
  package func seedFromStoredBases() throws {
    let horizon = try writer.horizon()
    guard horizon.isTrimmed else { return }
    for base in try writer.bases() {
      var insertSeqs: [UInt64] = []
      for slot in base.slots {
        guard let text = try writer.event(at: slot.seq), text.id == slot.id else {
          throw corruption(
            seq: slot.seq, "the base of \(TerminalText.quoted(base.stream)) reads it as the text of \(slot.id.text)")
        }
        if case .edit(_, _, _, _, _, let inserted) = text.op {
          insertSeqs.append(inserted)
        } else {
          insertSeqs.append(slot.seq)
        }
      }
      try plant(base, insertSeqs: insertSeqs)
    }
    try retire(try writer.retiredItems())
    nextSeq = horizon.seq
  }

  /// The retired items' id entries (`RetiredItem`): their ids stay used.
  private func retire(_ retired: [RetiredItem]) throws {
    for item in retired {
      guard idEntries[item.id] == nil else { throw MsglogError.idAlreadyUsed(item.id, insertSeq: item.insertSeq) }
      idEntries[item.id] = item.entry
      summary?.ids += 1
    }
  }

  /// The stream's order, head, id entries (`insertSeqs`, one per slot)
  /// and checkpoint as of its base.
  private func plant(_ base: StreamBase, insertSeqs: [UInt64]) throws {
    var state = try takeState(of: base.stream)
    for (index, slot) in base.slots.enumerated() {
      try state.tree.insert(slot, at: index)
      idEntries[slot.id] = IdEntry(insertSeq: insertSeqs[index])
      summary?.ids += 1
    }
    state.head.version = base.version
    state.head.lastSeq = base.seq
    state.head.count = UInt64(base.slots.count)
    try writer.putCheckpoint(base)
    state.head.checkpointVersion = base.version
    state.head.checkpointCount = UInt64(base.slots.count)
    summary?.checkpoints += 1
    streams[base.stream] = state
  }
}
