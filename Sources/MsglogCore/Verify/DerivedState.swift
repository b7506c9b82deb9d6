/// What the derived tables must hold, computed from the events alone: each
/// stream's head and order, the id index and the per-stream event index.
///
/// `verify` compares the stored tables with it.
package struct DerivedState {
  package var projections: [StreamName: Projection] = [:]
  package var lastSeqs: [StreamName: UInt64] = [:]
  package var ids: [ItemID: IdEntry] = [:]
  /// Each stream's event seqs, in order.
  package var streamSeqs: [StreamName: [UInt64]] = [:]
  /// The stream each removed item was removed from (a restore must be of the same stream).
  var removedFrom: [ItemID: StreamName] = [:]
  /// Each undo event's target, and how many standing undoers each undone
  /// event has: an event is undone while it has one.
  var undoTargets: [UInt64: UInt64] = [:]
  var standingUndoers: [UInt64: Int] = [:]

  /// Where the log's history begins (`trim`): an undo of an event before
  /// it is taken as the bases say, its target being gone.
  package var horizon: UInt64 = 1

  package init() {}

  /// Folds one decoded event in; throws when it does not fit its stream.
  ///
  /// - Parameter target: the event `event.undoes` names, read from the log
  ///   (nil when it names none, or none can be read).
  package mutating func apply(_ event: Event, target: Event? = nil) throws(ReplayError) {
    func refuse(_ reason: String) -> ReplayError { ReplayError(seq: event.seq, reason: reason) }
    switch event.op {
    case .insert(let id, _, _, _):
      if let earlier = ids[id] { throw refuse("id \(id.text) was already inserted at seq \(earlier.insertSeq)") }
    case .edit(let id, _, _, _, _, let inserted):
      guard let entry = ids[id], entry.removeSeq == 0 else { throw refuse("edit of \(id.text), which is not live") }
      guard entry.insertSeq == inserted else {
        throw refuse(
          "edit of \(id.text) names its insert at seq \(inserted), but it was inserted at seq \(entry.insertSeq)")
      }
    case .restore(let id, _, let textSeq):
      guard let entry = ids[id], entry.removeSeq != 0, removedFrom[id] == event.stream else {
        throw refuse("restore of \(id.text), which is not a removed item of this stream")
      }
      guard entry.removedTextSeq == textSeq else {
        throw refuse(
          "restore of \(id.text) brings back the text of seq \(textSeq), but it had that of seq \(entry.removedTextSeq)"
        )
      }
    case .erase(let id, let index):
      guard let entry = ids[id] else { throw refuse("erase of \(id.text), which was never inserted") }
      if index == nil, entry.removeSeq == 0 || removedFrom[id] != event.stream {
        throw refuse("erase of \(id.text) says it was removed, but it is not a removed item of this stream")
      }
      if index != nil, entry.removeSeq != 0 { throw refuse("erase of \(id.text) at an index, but it is not live") }
    case .unsign(let id, let edit):
      // (Its edit, and perhaps its item, may be gone with trimmed history.)
      guard edit < event.seq, ids[id] != nil || edit < horizon else {
        throw refuse("unsign of seq \(edit), which is not an earlier edit of \(id.text)")
      }
    case .remove, .move: break
    }
    if let undoes = event.undoes { try checkUndo(event, of: undoes, target: target) }
    var removedSlot: Slot? = nil
    if case .remove(_, let index) = event.op, let projection = projections[event.stream],
      index < UInt64(projection.count)
    {
      removedSlot = projection.slot(at: Int(index))
    } else if case .erase(_, let index?) = event.op, let projection = projections[event.stream],
      index < UInt64(projection.count)
    {
      removedSlot = projection.slot(at: Int(index))
    }
    // In place: a copy of the projection would copy its whole tree.
    try projections[event.stream, default: Projection()].apply(event)
    lastSeqs[event.stream] = event.seq
    streamSeqs[event.stream, default: []].append(event.seq)
    switch event.op {
    case .insert(let id, _, _, _): ids[id] = IdEntry(insertSeq: event.seq)
    case .remove(let id, _):
      ids[id]?.removeSeq = event.seq
      if let removedSlot, let insertSeq = ids[id]?.insertSeq {
        ids[id]?.textSeq = removedSlot.seq == insertSeq ? 0 : removedSlot.seq
      }
      removedFrom[id] = event.stream
    case .erase(let id, let index):
      ids[id]?.removeSeq = event.seq
      if index != nil, let removedSlot, let insertSeq = ids[id]?.insertSeq {
        ids[id]?.textSeq = removedSlot.seq == insertSeq ? 0 : removedSlot.seq
      }
      removedFrom[id] = event.stream
    case .restore(let id, _, _):
      ids[id]?.removeSeq = 0
      ids[id]?.textSeq = 0
      removedFrom[id] = nil
    case .move, .edit, .unsign: break
    }
    if let undoes = event.undoes { markUndone(undoes, by: event.seq) }
  }

  /// An event that says it undoes `seq`: an earlier event of its stream,
  /// not undone, of which it is what undoing appends.
  func checkUndo(_ event: Event, of seq: UInt64, target: Event?) throws(ReplayError) {
    func refuse(_ reason: String) -> ReplayError { ReplayError(seq: event.seq, reason: reason) }
    if seq < horizon { return }
    guard seq < event.seq, let target, target.seq == seq else { throw refuse("it undoes seq \(seq), no earlier event") }
    guard target.stream == event.stream else {
      throw refuse("it undoes seq \(seq), an event of stream \(TerminalText.quoted(target.stream))")
    }
    if standingUndoers[seq, default: 0] > 0 { throw refuse("it undoes seq \(seq), which is undone already") }
    switch (target.op, event.op) {
    case (.insert, .remove), (.restore, .remove), (.remove, .restore), (.edit, .edit), (.move, .move):
      if target.id == event.id { return }
    default: break
    }
    throw refuse(
      "it undoes seq \(seq), \(WriteOperation.withArticle(target.opName)) of \(target.id.text), but is "
        + "\(WriteOperation.withArticle(event.opName)) of \(event.id.text)")
  }

  /// `undoer` now stands undoing `seq`: `seq` is undone, and if it undid
  /// another event, that one no longer is (and so on down the chain).
  mutating func markUndone(_ seq: UInt64, by undoer: UInt64) {
    undoTargets[undoer] = seq
    standingUndoers[seq, default: 0] += 1
    var flipped = seq
    var undone = true
    while let target = undoTargets[flipped] {
      let before = standingUndoers[target, default: 0] > 0
      standingUndoers[target, default: 0] += undone ? -1 : 1
      let after = standingUndoers[target, default: 0] > 0
      guard before != after else { return }
      flipped = target
      undone = after
    }
  }

  /// The counters the `heads` table must hold for `stream`: version, last seq, count.
  package func counters(of stream: StreamName) -> [UInt64]? {
    guard let projection = projections[stream] else { return nil }
    return [projection.version, lastSeqs[stream] ?? 0, UInt64(projection.count)]
  }

  /// Rebuilds every derived table from the events: each event is run again
  /// through the write path (`LedgerSession` in rebuild mode), which checks
  /// that it reproduces the stored record, so the rebuilt tables are exactly
  /// what the original writes made.
  package static func rebuild(
    _ writer: any LogWriter, checkpointInterval: UInt64 = 256, progress: ((VerifyProgress) -> Void)? = nil
  ) throws {
    let total = progress == nil ? 0 : Int(try writer.headSeq())
    try writer.clearDerived()
    let session = try LedgerSession(
      writer: writer, now: Timestamp(milliseconds: 0), mode: .rebuild, checkpointInterval: checkpointInterval)
    // A trimmed log's history begins at its horizon, from its bases.
    try session.seedFromStoredBases()
    var expected = session.nextSeq
    try writer.forEachEvent(from: 1) { event in
      let seq = event.seq
      guard seq == expected else { throw MsglogError.corruptedLog("the log has a gap: seq \(expected) is missing") }
      expected += 1
      let request = try WriteRequest(recreating: event)
      guard try session.replay(request, recorded: event) != nil else {
        throw MsglogError.eventDoesNotFit(seq: seq, reason: "an event that changes nothing, which no msglog writes")
      }
      // Bound the session's caches on long logs.
      if seq % UInt64(LedgerSession.flushInterval) == 0 { try session.finish() }
      if let progress, seq % UInt64(VerifyProgress.interval) == 0 {
        progress(VerifyProgress(stage: .rebuild, done: Int(seq), total: max(total, Int(seq))))
      }
      return true
    }
    progress?(VerifyProgress(stage: .rebuild, done: Int(expected - 1), total: Int(expected - 1)))
    try session.finish()
  }
}
