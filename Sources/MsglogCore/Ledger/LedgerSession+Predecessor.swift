/// The predecessor rule (docs/REFERENCE.md, "Working together"): where an
/// item goes so that it follows the item that was before it in a past list
/// of its stream — walking back from there to the first item still live
/// now, and placing it right after that one (at 0 when none is).
///
/// The past list is never rebuilt: the stream's events since that version
/// are read newest first from the store (k records for k events, whatever
/// the size of the stream) and each candidate position is followed forward
/// through them (`LaterEvents`), then found at the head in the order tree or,
/// when an event named it, through the id index. An undo or a rebase so
/// costs O(k + log n) for k events since the version it goes back to.
extension LedgerSession {
  /// Calls `body` with the stream's events newest first, from the head of
  /// the session down, until it returns false.
  func forEachRecentEvent(of state: StreamState, _ body: (PositionalEvent) throws -> Bool) throws {
    guard state.head.lastSeq > 0 else { return }
    let stream = state.head.stream
    let name = stream.bytes
    try name.withUnsafeBytes { name in
      try writer.forEachStreamRecord(of: stream, downFrom: state.head.lastSeq) { seq, bytes in
        let found: PositionalEvent?
        do { found = try EventRecord.positional(bytes, ifStream: name) } catch {
          throw corruption(seq: seq, "\(error)")
        }
        guard let event = found, event.seq == seq else {
          throw MsglogError.derivedDamage(
            DerivedDamage(
              table: "stream-events",
              "the index of stream \(TerminalText.quoted(stream)) names seq \(seq), which is another stream's event"))
        }
        return try body(event)
      }
    }
  }

  /// The stream's events after `version`, oldest first.
  func events(after version: UInt64, of state: StreamState) throws -> LaterEvents {
    var newestFirst: [PositionalEvent] = []
    if version < state.head.version {
      try forEachRecentEvent(of: state) { event in
        newestFirst.append(event)
        return event.version > version + 1
      }
    }
    guard newestFirst.count == Int(state.head.version - min(version, state.head.version)) else {
      // Every event kept, the oldest first among them, and still short of
      // the version: the ones before it were trimmed, not lost.
      let kept =
        zip(newestFirst, newestFirst.dropFirst()).allSatisfy { $0.version == $1.version + 1 }
        && (newestFirst.first?.version ?? state.head.version) == state.head.version
      let horizon = try writer.horizon()
      if kept, horizon.isTrimmed, newestFirst.last.map({ $0.seq >= horizon.seq }) ?? true {
        throw MsglogError.historyTrimmed(horizon: horizon.seq)
      }
      throw MsglogError.derivedDamage(
        DerivedDamage(
          table: "stream-events",
          "the index of stream \(TerminalText.quoted(state.head.stream)) lacks events after version \(version)"))
    }
    return LaterEvents(newestFirst.reversed())
  }

  /// The first item live now among `candidates` (positions of the past list
  /// that `later` starts from, nearest first): its id and index at the head.
  func anchor(
    among candidates: some Sequence<Int>, through later: LaterEvents, in state: inout StreamState
  ) throws -> (id: ItemID, index: Int)? {
    for position in candidates {
      switch later.follow(position) {
      case .at(let index):
        guard (0..<state.tree.count).contains(index) else {
          throw MsglogError.derivedDamage(
            DerivedDamage(
              .order,
              "position \(index) of stream \(TerminalText.quoted(state.head.stream)) is past its \(state.tree.count) items"
            ))
        }
        return (try state.tree.element(at: index).id, index)
      case .named(let id):
        if let index = try liveIndex(of: id, in: &state) { return (id, index) }
      }
    }
    return nil
  }

  /// Where an item goes to follow `anchor` (at the head, the item itself at
  /// `moving` when it is in the list already): its final index.
  func place(after anchor: (id: ItemID, index: Int)?, moving: Int? = nil) -> Int {
    guard let anchor else { return 0 }
    if let moving, moving < anchor.index { return anchor.index }
    return anchor.index + 1
  }

  /// The index of a live item of the stream, nil when it is removed.
  func liveIndex(of id: ItemID, in state: inout StreamState) throws -> Int? {
    guard let entry = try idEntry(id), entry.removeSeq == 0 else { return nil }
    return try index(of: id, entry: entry, in: &state)
  }

  /// The text of an insert or edit record of the stream (the text record a
  /// slot names, or the one an edit replaced).
  func text(ofRecord seq: UInt64) throws -> EventRecord.TextRecord {
    let record = try writer.withRecord(at: seq) { bytes in
      do { return try EventRecord.textRecord(bytes, verifyingChecksum: true) } catch {
        throw corruption(seq: seq, "\(error)")
      }
    }
    guard let record else { throw corruption(seq: seq, "the record is missing") }
    return record
  }
}
