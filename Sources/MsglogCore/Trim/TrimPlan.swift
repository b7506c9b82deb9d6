/// What a `trim` drops and keeps, worked out in the write transaction
/// that does it (`LogWriter.trim`).
///
/// The horizon H asked for can come down, never up: an event at or after
/// it that brings back or erases an item removed before it (a restore, an
/// undo of a remove, an erase of a removed item) needs that item's row
/// and text, which no base holds (a base holds what is live). So the
/// horizon moves down to that item's remove, and the plan is made again,
/// until every event kept fits the bases.
package struct TrimPlan: Equatable, Sendable {
  /// The first seq kept.
  package var horizon: UInt64
  /// The horizon asked for, when it had to come down.
  package var asked: UInt64
  /// Each stream that had events before the horizon, with its list then.
  package var bases: [StreamBase]
  /// The seqs below the horizon whose records stay: the text records the
  /// bases read (an edit and the insert it names).
  package var kept: [UInt64]
  /// Of `kept`, the inserts read for their sender and time only: an edit
  /// before the horizon gave their item the text it has, and their own
  /// text is history the trim drops. Their records stay with no text, as
  /// an import of the bases writes them (`LedgerSession.seed`).
  package var superseded: [UInt64]
  /// Every item removed before the horizon (by this trim or an earlier
  /// one): its id stays used, its id entry stays, its base row names it.
  package var retired: [RetiredItem]

  /// The plan for trimming `reader`'s log before `asked`; nil when the log's
  /// history already begins at or after it.
  package static func make(before asked: UInt64, in reader: any LogReader) throws -> TrimPlan? {
    let current = try reader.horizon()
    var horizon = asked
    while true {
      guard horizon > current.seq else { return nil }
      let bases = try self.bases(before: horizon, in: reader)
      if let lower = try lowerHorizon(horizon, bases: bases, in: reader) {
        horizon = lower
        continue
      }
      let (kept, superseded) = try kept(by: bases, in: reader)
      return TrimPlan(
        horizon: horizon, asked: asked, bases: bases, kept: kept, superseded: superseded,
        retired: try retired(before: horizon, in: reader))
    }
  }

  /// Each stream's list just before `horizon`, from its checkpoints and
  /// its own events (`Replay`), at its last event before it.
  package static func bases(before horizon: UInt64, in reader: any LogReader) throws -> [StreamBase] {
    var bases: [StreamBase] = []
    let earlier = try reader.bases()
    for head in try reader.streamHeads() {
      // Its last event before the horizon: the head's, the index's, or
      // (below an earlier horizon) the earlier base's.
      var last: UInt64? = head.lastSeq < horizon ? head.lastSeq : nil
      if last == nil {
        try reader.forEachStreamRecord(of: head.stream, downFrom: horizon - 1) { seq, _ in
          last = seq
          return false
        }
      }
      if last == nil { last = earlier.first { $0.stream == head.stream }?.seq }
      guard let last else { continue }
      let projection = try Replay.replayFromCheckpoint(head.stream, through: horizon - 1, in: reader)
      bases.append(StreamBase(stream: head.stream, seq: last, version: projection.version, slots: projection.slots))
    }
    return bases
  }

  /// A lower horizon when an event kept names an item removed before
  /// `horizon` (see the type's note); nil when none does.
  static func lowerHorizon(_ horizon: UInt64, bases: [StreamBase], in reader: any LogReader) throws -> UInt64? {
    var live = Set<ItemID>()
    for base in bases { for slot in base.slots { live.insert(slot.id) } }
    var named = Set<ItemID>()
    try reader.forEachRecord(from: horizon) { seq, bytes in
      let event = try positional(bytes, seq: seq)
      switch event.change {
      case .restore, .erase(nil): if !live.contains(event.id) { named.insert(event.id) }
      default: break
      }
      return true
    }
    var lowest: UInt64? = nil
    for id in named {
      guard let entry = try reader.idEntry(id), entry.insertSeq < horizon else { continue }
      // Its latest remove before the horizon: the item is live just before it.
      guard let stream = try reader.event(at: entry.insertSeq)?.stream else { continue }
      var removed: UInt64? = nil
      try reader.forEachStreamRecord(of: stream, downFrom: horizon - 1) { seq, bytes in
        let event = try positional(bytes, seq: seq)
        guard event.id == id else { return true }
        switch event.change {
        case .remove, .erase: removed = seq
        default: break
        }
        return removed == nil
      }
      if let removed { lowest = min(lowest ?? removed, removed) }
    }
    return lowest
  }

  /// The items removed before `horizon`, in their ids' order: those an
  /// earlier trim retired, and those whose remove is below it now (each
  /// one's stream read from its insert, still there).
  static func retired(before horizon: UInt64, in reader: any LogReader) throws -> [RetiredItem] {
    let byID = { (a: RetiredItem, b: RetiredItem) in ItemID.precedesInStorageOrder(a.id, b.id) }
    var earlier = try reader.retiredItems()
    if !zip(earlier, earlier.dropFirst()).allSatisfy(byID) { earlier.sort(by: byID) }
    // The id index comes in the ids' byte order (`LogReader.forEachIdEntry`):
    // merged with the earlier ones as it comes, so that nothing is hashed
    // or sorted (a dictionary of every retired item and a sort of it were
    // half of trimming half of a 1,000,000-event chat).
    var retired: [RetiredItem] = []
    retired.reserveCapacity(earlier.count)
    var next = 0
    var last: ItemID? = nil
    try reader.forEachIdEntry(from: []) { id, entry in
      precondition(last.map { ItemID.precedesInStorageOrder($0, id) } ?? true, "the id index is not in id order")
      last = id
      while next < earlier.count, ItemID.precedesInStorageOrder(earlier[next].id, id) {
        retired.append(earlier[next])
        next += 1
      }
      // What an earlier trim retired stays retired, its base row the copy
      // that counts; the rest are read from their inserts.
      if next < earlier.count, earlier[next].id == id {
        retired.append(earlier[next])
        next += 1
      } else if entry.isRemoved(before: horizon) {
        guard let insert = try reader.event(at: entry.insertSeq), insert.id == id else {
          throw corruption(seq: entry.insertSeq, "it is not the insert of \(id.text), whose id entry names it")
        }
        retired.append(
          RetiredItem(stream: insert.stream, id: id, insertSeq: entry.insertSeq, removeSeq: entry.removeSeq))
      }
      return true
    }
    retired += earlier[next...]
    return retired
  }

  /// The records below the horizon the bases read, and the inserts among
  /// them an edit superseded.
  static func kept(by bases: [StreamBase], in reader: any LogReader) throws -> (
    kept: [UInt64], superseded: [UInt64]
  ) {
    var kept = Set<UInt64>()
    var superseded: [UInt64] = []
    var textSeqs: [(seq: UInt64, tag: Int)] = []
    for base in bases {
      for slot in base.slots {
        kept.insert(slot.seq)
        textSeqs.append((slot.seq, 0))
      }
    }
    // An edit's record holds the text; its insert, the sender and time.
    try Replay.read(textSeqs, in: reader) { seq, bytes, _ in
      guard case .edit = try positional(bytes, seq: seq).change else { return }
      do {
        if case .edit(_, _, _, let inserted) = try EventRecord.textRecord(bytes, verifyingChecksum: false) {
          kept.insert(inserted)
          superseded.append(inserted)
        }
      } catch { throw corruption(seq: seq, "\(error)") }
    }
    return (kept.sorted(), superseded.sorted())
  }

  /// A record's positional form, damage named with its seq.
  private static func positional(_ bytes: UnsafeRawBufferPointer, seq: UInt64) throws -> PositionalEvent {
    do { return try EventRecord.positional(bytes) } catch { throw corruption(seq: seq, "\(error)") }
  }
}
