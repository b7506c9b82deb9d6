/// `edit` and `restore`: a live item's new text, a removed item back.
extension LedgerSession {
  /// Gives a live item new text; nil (nothing appended) when it has that text.
  ///
  /// The edit record names the record that held the text until now (its
  /// insert or previous edit) and the insert: an undo reads the text before
  /// in one lookup, a list the author and time. The item's slot then names
  /// the edit as its text record.
  func performEdit(
    _ selector: ItemSelector, text: String, sender: String?, time: Timestamp?, undoes: Undoes?,
    on state: inout StreamState
  ) throws -> Outcome? {
    let index = try resolve(selector, in: &state)
    let slot = try state.tree.element(at: index)
    let current = try self.text(ofRecord: slot.seq)
    guard current.id == slot.id else {
      throw corruption(seq: slot.seq, "it is not the text of \(slot.id.text)")
    }
    // A rebuild replays what the log holds: an erased item's edits all
    // read "" now, and each still is the event it was.
    if current.text.hasSameBytes(as: text), mode == .append, erasedAt == nil { return nil }
    guard let entry = try idEntry(slot.id) else { throw MsglogError.noSuchItem(slot.id, stream: state.head.stream) }
    let event = try append(
      .edit(
        id: slot.id, text: text, sender: sender, index: UInt64(index), replaces: slot.seq, inserted: entry.insertSeq),
      time: time, undoes: undoes, to: &state)
    try state.tree.replace(at: index, with: Slot(id: slot.id, seq: event.seq))
    try checkpointIfDue(&state)
    return Outcome(event: event, index: index)
  }

  /// Brings a removed item back, at `index` or after its predecessor.
  func performRestore(
    _ selector: ItemSelector, at requested: Int?, time: Timestamp?, undoes: Undoes?, on state: inout StreamState
  ) throws -> Outcome {
    let (id, entry) = try resolveRemoved(selector, in: &state)
    if let erased = try erasure(of: entry, id: id) { throw erased }
    let count = state.tree.count
    let index = try requested ?? predecessorIndex(ofRemove: entry.removeSeq, in: &state)
    guard (0...count).contains(index) else {
      throw MsglogError.insertOutOfRange(stream: state.head.stream, index: index, count: count)
    }
    let textSeq = entry.removedTextSeq
    let event = try append(
      .restore(id: id, index: UInt64(index), textSeq: textSeq), time: time, undoes: undoes, to: &state)
    try state.tree.insert(Slot(id: id, seq: textSeq), at: index)
    state.head.count += 1
    var restored = entry
    restored.removeSeq = 0
    restored.textSeq = 0
    idEntries[id] = restored
    try checkpointIfDue(&state)
    return Outcome(event: event, index: index)
  }

  /// Where a removed item goes back by the predecessor rule: after the first
  /// item before it, in the list as it was just before the remove at
  /// `removeSeq`, that is still live.
  func predecessorIndex(ofRemove removeSeq: UInt64, in state: inout StreamState) throws -> Int {
    place(after: try predecessor(ofRemove: removeSeq, in: &state))
  }

  /// The item a removed item follows by the predecessor rule (see
  /// `predecessorIndex`): its id and index now; nil when none is live.
  func predecessor(ofRemove removeSeq: UInt64, in state: inout StreamState) throws -> (id: ItemID, index: Int)? {
    let remove = try positionalEvent(at: removeSeq, of: state)
    guard case .remove(let index) = remove.change else {
      throw MsglogError.derivedDamage(DerivedDamage(.ids, "seq \(removeSeq) is not the remove the id index says"))
    }
    let later = try events(after: remove.version - 1, of: state)
    return try anchor(among: (0..<Int(index)).reversed(), through: later, in: &state)
  }

  /// The positional form of one event of the stream.
  func positionalEvent(at seq: UInt64, of state: StreamState) throws -> PositionalEvent {
    let name = state.head.stream.bytes
    let found = try writer.withRecord(at: seq) { bytes in
      try name.withUnsafeBytes { name in
        do { return try EventRecord.positional(bytes, ifStream: name) } catch { throw corruption(seq: seq, "\(error)") }
      }
    }
    guard let found, let event = found else {
      throw corruption(seq: seq, "it is not an event of stream \(TerminalText.quoted(state.head.stream))")
    }
    return event
  }

  /// Finds the removed item of the stream a selector names (a full id, or a
  /// unique prefix among the stream's removed items), or says why not.
  func resolveRemoved(_ selector: ItemSelector, in state: inout StreamState) throws -> (ItemID, IdEntry) {
    let stream = state.head.stream
    switch selector {
    case .id(let id):
      guard let entry = try idEntry(id) else { throw MsglogError.noSuchItem(id, stream: stream) }
      try refuseRetired(entry, id: id, in: stream)
      try checkHome(of: entry, id: id, is: stream)
      guard entry.removeSeq != 0 else { throw MsglogError.itemIsLive(id, stream: stream) }
      return (id, entry)
    case .prefix(let given):
      let none = { (prefix: String) in MsglogError.noRemovedPrefixMatch(prefix: prefix, stream: stream) }
      do {
        return try uniqueMatch(of: given, in: stream, removed: [true], none: none)
      } catch let noMatch as MsglogError {
        guard case .noRemovedPrefixMatch = noMatch else { throw noMatch }
        // The prefix of a live item: said as its full id would be.
        if let (id, _) = try? uniqueMatch(of: given, in: stream, removed: [false], none: none) {
          throw MsglogError.itemIsLive(id, stream: stream)
        }
        throw noMatch
      }
    }
  }
}
