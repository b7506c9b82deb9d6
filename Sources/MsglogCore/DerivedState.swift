/// What the derived tables must hold, computed from the events alone: each
/// stream's head and order, and the id index.
///
/// `verify` compares the stored tables with it; `verify --repair` writes it.
public struct DerivedState {
  public var projections: [String: Projection] = [:]
  public var lastSeqs: [String: UInt64] = [:]
  public var ids: [ItemID: IdEntry] = [:]

  public init() {}

  /// Folds one decoded event in; throws when it does not fit its stream.
  public mutating func apply(_ event: Event) throws(ReplayError) {
    if case .insert(let id, _, _, _) = event.op, let earlier = ids[id] {
      throw ReplayError(seq: event.seq, reason: "id \(id.text) was already inserted at seq \(earlier.insertSeq)")
    }
    try projections[event.stream, default: Projection()].apply(event)
    lastSeqs[event.stream] = event.seq
    switch event.op {
    case .insert(let id, _, _, _): ids[id] = IdEntry(insertSeq: event.seq)
    case .remove(let id, _): ids[id]?.removeSeq = event.seq
    case .move: break
    }
  }

  /// The head row the `heads` table must hold for `stream`.
  public func head(of stream: String) -> StreamHead? {
    guard let projection = projections[stream] else { return nil }
    return StreamHead(
      stream: stream, version: projection.version, lastSeq: lastSeqs[stream] ?? 0, count: UInt64(projection.count))
  }

  /// Builds the state from every event of the log, refusing a damaged one.
  public static func replayingAll(_ reader: any LogReader) throws -> DerivedState {
    var state = DerivedState()
    var expected: UInt64 = 1
    try reader.forEachRecord(from: 1) { seq, bytes in
      guard seq == expected else {
        throw MsglogError.refused("the log has a gap: seq \(expected) is missing")
      }
      expected += 1
      let event = try decodeRecord(bytes, seq: seq)
      do { try state.apply(event) } catch { throw MsglogError.refused("\(error)") }
      return true
    }
    return state
  }

  /// Replaces every derived table with this state.
  public func write(to writer: any LogWriter) throws {
    try writer.clearDerived()
    for stream in projections.keys {
      try writer.putStreamHead(head(of: stream)!)
      try writer.putOrder(projections[stream]!.ids, of: stream)
    }
    for (id, entry) in ids { try writer.putIdEntry(entry, for: id) }
  }
}
