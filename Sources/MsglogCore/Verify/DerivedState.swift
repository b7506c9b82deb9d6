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

  package init() {}

  /// Folds one decoded event in; throws when it does not fit its stream.
  package mutating func apply(_ event: Event) throws(ReplayError) {
    if case .insert(let id, _, _, _) = event.op, let earlier = ids[id] {
      throw ReplayError(seq: event.seq, reason: "id \(id.text) was already inserted at seq \(earlier.insertSeq)")
    }
    try projections[event.stream, default: Projection()].apply(event)
    lastSeqs[event.stream] = event.seq
    streamSeqs[event.stream, default: []].append(event.seq)
    switch event.op {
    case .insert(let id, _, _, _): ids[id] = IdEntry(insertSeq: event.seq)
    case .remove(let id, _): ids[id]?.removeSeq = event.seq
    case .move: break
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
  package static func rebuild(_ writer: any LogWriter, checkpointInterval: UInt64 = 256) throws {
    try writer.clearDerived()
    let session = try LedgerSession(
      writer: writer, now: Timestamp(milliseconds: 0), mode: .rebuild, checkpointInterval: checkpointInterval)
    var expected: UInt64 = 1
    try writer.forEachEvent(from: 1) { event in
      let seq = event.seq
      /// A recorded index as a position; past 2^63-1 no msglog wrote it.
      func position(_ index: UInt64) throws(MsglogError) -> Int {
        guard let position = Int(exactly: index) else {
          throw .eventDoesNotFit(seq: seq, reason: "index \(index) is beyond any stream")
        }
        return position
      }
      guard seq == expected else { throw MsglogError.corruptedLog("the log has a gap: seq \(expected) is missing") }
      expected += 1
      let command: WriteRequest.Command
      switch event.op {
      case .insert(let id, let index, let text, let sender):
        command = .insert(InsertRequest(index: try position(index), text: text, sender: sender, id: id))
      case .remove(let id, _):
        command = .remove(.id(id))
      case .move(let id, let from, let to):
        command = .move(from: try position(from), to: try position(to), id: id)
      }
      let request = WriteRequest(stream: event.stream, command: command, time: event.time)
      guard try session.replay(request, recorded: event) != nil else {
        throw MsglogError.eventDoesNotFit(seq: seq, reason: "a move onto itself, which no msglog writes")
      }
      // Bound the session's caches on long logs.
      if seq % UInt64(LedgerSession.flushInterval) == 0 { try session.finish() }
      return true
    }
    try session.finish()
  }
}
