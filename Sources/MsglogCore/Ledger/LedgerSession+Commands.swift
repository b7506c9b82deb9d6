/// The three commands every other is made of: an insert, a remove and a
/// move, each checked against the stream as it stands, appended as one
/// event and applied to the stream's order tree and id index.
extension LedgerSession {
  func performInsert(_ insert: InsertRequest, time: Timestamp?, undoes: Undoes?, on state: inout StreamState) throws
    -> Outcome
  {
    let count = state.tree.count
    let index = insert.index ?? count
    guard (0...count).contains(index) else {
      throw MsglogError.insertOutOfRange(stream: state.head.stream, index: index, count: count)
    }
    let id: ItemID
    if let requested = insert.id {
      // A rebuild replays a log whose inserts were checked to be unique
      // (and starts from an empty id index): no lookup, no round trip.
      if mode == .append, let entry = try idEntry(requested) {
        // Where it was inserted, so that a token that may not read that
        // stream is not told its seq (`MsglogError.hidingStreams`); an
        // insert a trim dropped names no stream: told to no named token.
        let home = try home(of: entry)
        if home != state.head.stream {
          throw MsglogError.idUsedInAnotherStream(requested, insertSeq: entry.insertSeq, home: home)
        }
        throw MsglogError.idAlreadyUsed(requested, insertSeq: entry.insertSeq)
      }
      id = requested
    } else {
      id = try freshID()
    }
    let event = try append(
      .insert(id: id, index: UInt64(index), text: insert.text, sender: insert.sender), time: time, undoes: undoes,
      to: &state)
    try state.tree.insert(Slot(id: id, seq: event.seq), at: index)
    state.head.count += 1
    idEntries[id] = IdEntry(insertSeq: event.seq)
    summary?.ids += 1
    try checkpointIfDue(&state)
    return Outcome(event: event, index: index)
  }

  func performRemove(_ selector: ItemSelector, time: Timestamp?, undoes: Undoes?, on state: inout StreamState) throws
    -> Outcome
  {
    let index = try resolve(selector, in: &state)
    let slot = try state.tree.element(at: index)
    let id = slot.id
    let event = try append(.remove(id: id, index: UInt64(index)), time: time, undoes: undoes, to: &state)
    try state.tree.remove(at: index)
    state.head.count -= 1
    var entry = try idEntry(id) ?? IdEntry(insertSeq: 0)
    entry.removeSeq = event.seq
    entry.leaf = 0
    // A restore brings the item back with the text it has now.
    entry.textSeq = slot.seq == entry.insertSeq ? 0 : slot.seq
    idEntries[id] = entry
    try checkpointIfDue(&state)
    return Outcome(event: event, index: index)
  }

  func performMove(
    from: Int, to: Int, id: ItemID?, time: Timestamp?, undoes: Undoes?, on state: inout StreamState
  ) throws -> Outcome? {
    let count = state.tree.count
    for (end, index) in [(MsglogError.MoveEnd.from, from), (.to, to)] where !(0..<count).contains(index) {
      throw count == 0
        ? MsglogError.emptyStream(state.head.stream)
        : MsglogError.moveOutOfRange(stream: state.head.stream, end: end, index: index, count: count)
    }
    let moved = try state.tree.element(at: from).id
    if let id, id != moved {
      throw MsglogError.itemMismatch(index: from, found: moved, expected: id)
    }
    if from == to { return nil }
    let event = try append(
      .move(id: moved, from: UInt64(from), to: UInt64(to)), time: time, undoes: undoes, to: &state)
    try state.tree.move(from: from, to: to)
    try checkpointIfDue(&state)
    return Outcome(event: event, index: to)
  }
}
