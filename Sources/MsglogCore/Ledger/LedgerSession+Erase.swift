/// `erase`: an item forgotten for everyone (docs/REFERENCE.md, "Forgetting
/// on purpose").
///
/// The erase event leaves a live item's list as a remove does and keeps a
/// removed one removed; in the same transaction every record that held the
/// item's text — its insert and each edit, found by following the edits'
/// `replaces` back from the text it has now — is written again with its
/// body blanked (record format 4's erased body: no sender, no text, the
/// erase's seq). Frames stay as they were, so seqs, versions, positions and
/// every order replay folds are exactly as before. The id index keeps the
/// erase as the item's `removeSeq`: what refuses its coming back is one
/// read of that record (`erasure(of:id:)`), with no new derived row.
extension LedgerSession {
  /// Erases the item `selector` names, live or removed; nil (nothing
  /// appended) when it is erased already, or was removed before a trim's
  /// horizon: its insert and edits went with the trim, so no event holds
  /// its text any more (and whether that remove was an erase is not kept).
  func performErase(_ selector: ItemSelector, time: Timestamp?, on state: inout StreamState) throws -> Outcome? {
    let id: ItemID
    let found: IdEntry
    do {
      (id, found) = try resolveAny(selector, in: &state)
    } catch MsglogError.historyTrimmed {
      // Removed before the horizon, in this stream (`refuseRetired` said so of another's): its text went with the trim.
      return nil
    }
    var entry = found
    if entry.removeSeq != 0, try erasure(of: entry, id: id) != nil { return nil }
    let index: Int?
    let textSeq: UInt64
    if entry.removeSeq == 0 {
      let at = try self.index(of: id, entry: entry, in: &state)
      textSeq = try state.tree.element(at: at).seq
      index = at
    } else {
      textSeq = entry.removedTextSeq
      index = nil
    }
    let event = try append(.erase(id: id, index: index.map { UInt64($0) }), time: time, to: &state)
    if let index {
      try state.tree.remove(at: index)
      state.head.count -= 1
    }
    entry.removeSeq = event.seq
    entry.leaf = 0
    entry.textSeq = textSeq == entry.insertSeq ? 0 : textSeq
    idEntries[id] = entry
    // A rebuild finds the records blanked already (the log is what it checks).
    var outcome = Outcome(event: event, index: index ?? -1)
    if mode == .append { outcome.blanked = try blankTexts(of: id, from: textSeq, erasedAt: event.seq) }
    try checkpointIfDue(&state)
    return outcome
  }

  /// Writes every text record of the item again with its body erased: the
  /// record at `textSeq` (its text now) and, through each edit's
  /// `replaces`, every one before it down to its insert.
  ///
  /// In a trimmed log the chain may reach a record the trim dropped: the
  /// item's base kept its text record and the insert it names, and the
  /// walk goes on at that insert.
  private func blankTexts(of id: ItemID, from textSeq: UInt64, erasedAt erase: UInt64) throws -> Int {
    var seq = textSeq
    var blanked = 0
    var insert: UInt64? = nil
    let horizon = try writer.horizon().seq
    while true {
      let found = try writer.event(at: seq)
      if found == nil, seq < horizon, let insert, insert != seq {
        seq = insert
        continue
      }
      guard var event = found, event.id == id else {
        throw corruption(seq: seq, "it is not a text record of \(id.text)")
      }
      let replaces: UInt64?
      switch event.op {
      case .insert(let id, let index, _, _):
        event.op = .insert(id: id, index: index, text: "", sender: nil)
        replaces = nil
      case .edit(let id, _, _, let index, let before, let inserted):
        event.op = .edit(id: id, text: "", sender: nil, index: index, replaces: before, inserted: inserted)
        replaces = before
        insert = inserted
      case .remove, .move, .restore, .erase, .unsign:
        throw corruption(seq: seq, "it is not a text record of \(id.text)")
      }
      // Imported blank already (an exported erased log): by this very
      // erase. An edit unsigned before is blanked now all the same.
      if let earlier = event.erased, earlier != erase, try !isUnsign(at: earlier) {
        throw MsglogError.eventDoesNotFit(seq: seq, reason: "it says it was erased at seq \(earlier), not \(erase)")
      }
      event.erased = erase
      try writer.replaceRecord(EventRecord.encode(event, layout: .framed), of: event)
      blanked += 1
      guard let replaces else { return blanked }
      seq = replaces
    }
  }

  /// Takes the sender off the edit at seq `edit` of the item `selector`
  /// names, which stays as it is (`erase --sender`, for a sender's edits
  /// of others' items): an unsign event, and the edit written again with
  /// its text and no sender, saying the unsign's seq. Nil (nothing
  /// appended) when the edit was erased or unsigned before. No list
  /// changes; the stream's version grows.
  func performUnsign(_ selector: ItemSelector, edit: UInt64, time: Timestamp?, on state: inout StreamState) throws
    -> Outcome?
  {
    let found = try writer.event(at: edit)
    // An edit a trim dropped since (an import, a pull or a rebuild of a
    // trimmed log): nothing of it is left to change, nor perhaps its item.
    if found == nil, case .id(let id) = selector, edit < (try writer.horizon().seq) {
      let unsign = try append(.unsign(id: id, edit: edit), time: time, to: &state)
      try checkpointIfDue(&state)
      return Outcome(event: unsign, index: -1)
    }
    let (id, _) = try resolveAny(selector, in: &state)
    guard var event = found, event.id == id, event.stream == state.head.stream,
      case .edit(_, let text, _, let index, let replaces, let inserted) = event.op
    else {
      throw MsglogError.invalidInput(
        .write("an unsign names seq \(edit), which is not an edit of \(id.text) in stream \(state.head.stream)"))
    }
    // Unsigned or erased before (by another `erase --sender` meanwhile):
    // nothing to do. An edit that names no sender is unsigned all the
    // same: a trimmed log's import plants its bases' edits without one.
    if let earlier = event.erased, earlier < nextSeq { return nil }
    // Found unsigned by this very event (an import, a pull): it kept its
    // text, which is never empty (an empty one is an erase's blank).
    if event.erased == nextSeq, text.isEmpty {
      throw MsglogError.invalidInput(.write("an unsigned edit keeps its text: seq \(edit) holds none"))
    }
    let unsign = try append(.unsign(id: id, edit: edit), time: time, to: &state)
    var outcome = Outcome(event: unsign, index: -1)
    // An import or a rebuild finds the edit as this unsign left it, or
    // blank from a later erase of its item: it stays as it is.
    if mode == .append, event.erased == nil {
      event.op = .edit(id: id, text: text, sender: nil, index: index, replaces: replaces, inserted: inserted)
      event.erased = unsign.seq
      try writer.replaceRecord(EventRecord.encode(event, layout: .framed), of: event)
      outcome.blanked = 1
    }
    try checkpointIfDue(&state)
    return outcome
  }

  /// Whether the event at `seq` is an unsign (what an edit's `erased`
  /// names when only its sender was taken off).
  private func isUnsign(at seq: UInt64) throws -> Bool {
    try writer.withRecord(at: seq) { bytes in
      do { return try EventRecord.positional(bytes) } catch { throw corruption(seq: seq, "\(error)") }
    }.map { (event: PositionalEvent) in event.change == .unsign } ?? false
  }

  /// The refusal of an item that was erased: nil when `entry` (removed)
  /// was removed by a plain remove. One record read.
  func erasure(of entry: IdEntry, id: ItemID) throws -> MsglogError? {
    guard entry.removeSeq != 0 else { return nil }
    let seq = entry.removeSeq
    let isErase = try writer.withRecord(at: seq) { bytes in
      do { return try EventRecord.positional(bytes) } catch { throw corruption(seq: seq, "\(error)") }
    }.map { event -> Bool in
      if case .erase = event.change { return true }
      return false
    }
    return isErase == true ? .itemErased(id, eraseSeq: seq) : nil
  }

  /// The item of the stream a selector names, live or removed: a full id,
  /// or a unique prefix among all the stream's items.
  func resolveAny(_ selector: ItemSelector, in state: inout StreamState) throws -> (ItemID, IdEntry) {
    let stream = state.head.stream
    switch selector {
    case .id(let id):
      guard let entry = try idEntry(id) else { throw MsglogError.noSuchItem(id, stream: stream) }
      try refuseRetired(entry, id: id, in: stream)
      try checkHome(of: entry, id: id, is: stream)
      return (id, entry)
    case .prefix(let given):
      return try uniqueMatch(of: given, in: stream, removed: [false, true]) {
        .noPrefixMatch(prefix: $0, stream: stream)
      }
    }
  }
}
