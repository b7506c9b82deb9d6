/// `undo`: the event that undoes another, and the check of an exported
/// line's `undoes`.
///
/// An event is undone while an event undoing it stands that is not itself
/// undone. Walking a stream's events newest first, each event's standing is
/// known when it is reached (every event that could undo it came later), so
/// one pass over the k events since the target answers it: O(k). No derived
/// table keeps it; nothing but an undo asks.
extension LedgerSession {
  /// The walk over a stream's events newest first, keeping which are undone.
  struct UndoWalk {
    /// The events met, newest first.
    var visited: [PositionalEvent] = []
    /// Each undone event's latest standing undoer.
    var undoneBy: [UInt64: UInt64] = [:]

    mutating func visit(_ event: PositionalEvent) {
      visited.append(event)
      if event.undoes != 0, undoneBy[event.seq] == nil, undoneBy[event.undoes] == nil {
        undoneBy[event.undoes] = event.seq
      }
    }

    /// The events from `visited[position]` to the head, oldest first: what
    /// follows the list as it was just before that event.
    func later(from position: Int) -> LaterEvents {
      LaterEvents(visited[...position].reversed())
    }
  }

  /// What undoing an event appends.
  enum Inverse {
    case remove(ItemID)
    case restore(ItemID, index: Int)
    case edit(ItemID, text: String)
    case move(ItemID, from: Int, to: Int)
  }

  /// Whether an event can be undone now, and how.
  enum Undoing {
    case inverse(Inverse)
    /// Its undoing changes nothing (the item is where, or says what, it was).
    case nothing
    case refused(MsglogError)
  }

  /// Appends the event that undoes event `seq` of the stream (the latest
  /// undoable one when nil), with `undoes`; nil when it changes nothing.
  /// `sender`, who undid, is named on an edit's undoing (an edit back),
  /// as on any edit: who edited, not who wrote the words it brings back.
  func performUndo(_ seq: UInt64?, sender: String?, time: Timestamp?, on state: inout StreamState) throws -> Outcome? {
    var walk = UndoWalk()
    var found: (target: UInt64, inverse: Inverse?)? = nil
    if let seq {
      let target = try walkBack(to: seq, of: state, into: &walk)
      switch try undoing(target, later: walk.later(from: walk.visited.count - 1), in: &state) {
      case .inverse(let inverse): found = (seq, inverse)
      case .nothing: found = (seq, nil)
      case .refused(let error): throw error
      }
    } else {
      // A trimmed log's history begins at its horizon: nothing before it is undone.
      let horizon = try writer.horizon().seq
      try forEachRecentEvent(of: state) { event in
        guard event.seq >= horizon else { return false }
        walk.visit(event)
        guard event.undoes == 0, walk.undoneBy[event.seq] == nil else { return true }
        guard
          case .inverse(let inverse) = try undoing(event, later: walk.later(from: walk.visited.count - 1), in: &state)
        else { return true }
        found = (event.seq, inverse)
        return false
      }
      guard found != nil else { throw MsglogError.nothingToUndo(stream: state.head.stream) }
    }
    guard let (target, inverse) = found, let inverse else { return nil }
    let undoes = Undoes(seq: target, checked: true)
    switch inverse {
    case .remove(let id):
      return try performRemove(.id(id), time: time, undoes: undoes, on: &state)
    case .restore(let id, let index):
      return try performRestore(.id(id), at: index, time: time, undoes: undoes, on: &state)
    case .edit(let id, let text):
      return try performEdit(.id(id), text: text, sender: sender, time: time, undoes: undoes, on: &state)
    case .move(let id, let from, let to):
      return try performMove(from: from, to: to, id: id, time: time, undoes: undoes, on: &state)
    }
  }

  /// The inverse of `event` now (docs/REFERENCE.md, "Working together"):
  /// an insert's or a restore's is a remove; a remove's a restore after its
  /// predecessor; an edit's an edit back to the text before it; a move's a
  /// move that puts the item after its predecessor just before the move.
  func undoing(_ event: PositionalEvent, later: LaterEvents, in state: inout StreamState) throws -> Undoing {
    let id = event.id
    guard let entry = try idEntry(id) else { throw MsglogError.noSuchItem(id, stream: state.head.stream) }
    let live = entry.removeSeq == 0
    // An erased item never comes back: no undo of its erase, its remove or
    // anything else it did.
    if !live, let erased = try erasure(of: entry, id: id) { return .refused(erased) }
    switch event.change {
    case .erase:
      return .refused(.itemErased(id, eraseSeq: event.seq))
    case .unsign:
      // A sender forgotten is not brought back: its undoing changes nothing.
      return .nothing
    case .insert, .restore:
      guard live else { return .refused(.itemRemoved(id, removeSeq: entry.removeSeq)) }
      return .inverse(.remove(id))
    case .remove(let index):
      guard !live else { return .refused(.itemIsLive(id, stream: state.head.stream)) }
      let anchor = try anchor(among: (0..<Int(index)).reversed(), through: later, in: &state)
      return .inverse(.restore(id, index: place(after: anchor)))
    case .edit(_, let replaces):
      guard live else { return .refused(.itemRemoved(id, removeSeq: entry.removeSeq)) }
      let slot = try state.tree.element(at: try index(of: id, entry: entry, in: &state))
      let before = try text(ofRecord: replaces).text
      guard try !text(ofRecord: slot.seq).text.hasSameBytes(as: before) else { return .nothing }
      return .inverse(.edit(id, text: before))
    case .move(let from, _):
      guard live else { return .refused(.itemRemoved(id, removeSeq: entry.removeSeq)) }
      let now = try index(of: id, entry: entry, in: &state)
      let anchor = try anchor(among: (0..<Int(from)).reversed(), through: later, in: &state)
      let to = place(after: anchor, moving: now)
      guard to != now else { return .nothing }
      return .inverse(.move(id, from: now, to: to))
    }
  }

  /// Walks the stream's events from the head back to event `seq`, into
  /// `walk`, and returns that event: refused when there is no such event,
  /// when it is another stream's, or when it is already undone.
  private func walkBack(to seq: UInt64, of state: StreamState, into walk: inout UndoWalk) throws -> PositionalEvent {
    let head = nextSeq - 1
    guard seq >= 1, seq <= head else { throw MsglogError.noSuchEvent(seq: seq, head: head) }
    let horizon = try writer.horizon().seq
    guard seq >= horizon else { throw MsglogError.historyTrimmed(horizon: horizon) }
    try forEachRecentEvent(of: state) { event in
      guard event.seq >= seq else { return false }
      walk.visit(event)
      return event.seq > seq
    }
    guard let target = walk.visited.last, target.seq == seq else {
      let home = try writer.event(at: seq)?.stream ?? StreamName("?")
      throw MsglogError.eventInAnotherStream(seq: seq, home: home, stream: state.head.stream)
    }
    if let undoer = walk.undoneBy[seq] { throw MsglogError.alreadyUndone(seq: seq, by: undoer) }
    return target
  }

  /// Checks an exported line's `undoes: seq` (an import, a rebuild): an
  /// earlier event of the same stream, not undone, of which `op` is what
  /// undoing appends — the remove of what it inserted or restored, the
  /// restore of what it removed, an edit or a move of the same item.
  func checkUndoes(_ seq: UInt64, by op: Event.Op, in state: inout StreamState) throws {
    // Below a trim's horizon the event it undoes went with that history:
    // the line is taken as the log recorded it (an import of a trimmed
    // log's export, a rebuild of its derived tables), as verify takes it.
    if seq < (try writer.horizon().seq) { return }
    var walk = UndoWalk()
    let target = try walkBack(to: seq, of: state, into: &walk)
    let event = Event(seq: 0, stream: state.head.stream, version: 0, time: Timestamp(milliseconds: 0), op: op)
    let fits: Bool
    switch (target.change, op) {
    case (.insert, .remove), (.restore, .remove), (.remove, .restore), (.edit, .edit), (.move, .move):
      fits = event.id == target.id
    default:
      fits = false
    }
    guard fits else {
      throw MsglogError.notAnUndo(
        seq: seq,
        reason: "undoing \(WriteOperation.withArticle(target.opName)) of \(target.id.text) is not "
          + "\(WriteOperation.withArticle(event.opName)) of \(event.id.text)")
    }
  }
}

extension PositionalEvent {
  /// The op, as the log and JSON name it.
  var opName: String {
    switch change {
    case .insert: return "insert"
    case .remove: return "remove"
    case .move: return "move"
    case .edit: return "edit"
    case .restore: return "restore"
    case .erase: return "erase"
    case .unsign: return "unsign"
    }
  }
}
