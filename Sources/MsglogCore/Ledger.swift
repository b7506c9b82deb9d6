/// Validates commands against the current state and appends their events,
/// inside one write transaction of an `EventStore`.
///
/// A session caches the order of every stream it touches, so a batch
/// (`append --lines`, `import`) validates each command against the state the
/// earlier ones left, and writes each derived row once, in `finish()`.
/// Nothing is visible to anyone until the store commits the transaction.
public final class LedgerSession {
  let writer: any LogWriter
  let now: Timestamp
  private var nextSeq: UInt64
  private var streams: [String: StreamState] = [:]
  /// Id index rows written by this session, not yet stored.
  private var idEntries: [ItemID: IdEntry] = [:]

  struct StreamState {
    var head: StreamHead
    var order: [ItemID]
    var dirty = false
  }

  public init(writer: any LogWriter, now: Timestamp) throws {
    self.writer = writer
    self.now = now
    self.nextSeq = try writer.headSeq() + 1
  }

  /// The stream's version as this session sees it.
  public func version(of stream: String) throws -> UInt64 {
    try state(of: stream).head.version
  }

  /// Refuses with a conflict unless the stream is at `expected`.
  public func expect(version expected: UInt64, of stream: String) throws {
    let actual = try version(of: stream)
    guard actual == expected else {
      throw MsglogError(
        .conflict,
        "stream \(TerminalText.quoted(stream)) is at version \(actual), not \(expected)",
        hint: "someone else changed it; re-read with 'msglog list' and retry")
    }
  }

  /// Validates `request` and appends its event; nil for a move onto itself,
  /// which appends nothing.
  public func perform(_ request: WriteRequest) throws -> Outcome? {
    try Limits.checkStreamName(request.stream)
    var state = try state(of: request.stream)
    let outcome: Outcome?
    switch request.command {
    case .insert(let insert):
      outcome = try performInsert(insert, time: request.time, on: &state)
    case .remove(let selector):
      outcome = try performRemove(selector, time: request.time, on: &state)
    case .move(let from, let to, let id):
      outcome = try performMove(from: from, to: to, id: id, time: request.time, on: &state)
    }
    streams[request.stream] = state
    return outcome
  }

  /// Writes the derived rows of everything performed.
  public func finish() throws {
    for (_, state) in streams where state.dirty {
      try writer.putStreamHead(state.head)
      try writer.putOrder(state.order, of: state.head.stream)
    }
    for (id, entry) in idEntries {
      try writer.putIdEntry(entry, for: id)
    }
    streams.removeAll()
    idEntries.removeAll()
  }

  // MARK: - Commands

  private func performInsert(_ insert: InsertRequest, time: Timestamp?, on state: inout StreamState) throws -> Outcome {
    try Limits.checkText(insert.text)
    if let sender = insert.sender { try Limits.checkSender(sender) }
    let count = UInt64(state.order.count)
    let index = insert.index ?? count
    guard index <= count else {
      throw MsglogError.refused(
        "index \(index) is out of range: stream \(TerminalText.quoted(state.head.stream)) has \(count) "
          + "\(count == 1 ? "item" : "items"), so an insert takes 0…\(count)")
    }
    let id: ItemID
    if let requested = insert.id {
      if let entry = try idEntry(requested) {
        throw MsglogError.refused(
          "id \(requested.text) was already used (inserted at seq \(entry.insertSeq))",
          hint: "an id is inserted at most once, even after it was removed")
      }
      id = requested
    } else {
      id = try freshID()
    }
    let event = try append(
      .insert(id: id, index: index, text: insert.text, sender: insert.sender), time: time,
      to: &state)
    state.order.insert(id, at: Int(index))
    state.head.count += 1
    idEntries[id] = IdEntry(insertSeq: event.seq)
    return Outcome(event: event, index: index)
  }

  private func performRemove(_ selector: ItemSelector, time: Timestamp?, on state: inout StreamState) throws -> Outcome
  {
    let index = try resolve(selector, in: state)
    let id = state.order[index]
    let event = try append(.remove(id: id, index: UInt64(index)), time: time, to: &state)
    state.order.remove(at: index)
    state.head.count -= 1
    var entry = try idEntry(id) ?? IdEntry(insertSeq: 0)
    entry.removeSeq = event.seq
    idEntries[id] = entry
    return Outcome(event: event, index: UInt64(index))
  }

  private func performMove(from: UInt64, to: UInt64, id: ItemID?, time: Timestamp?, on state: inout StreamState) throws
    -> Outcome?
  {
    let count = UInt64(state.order.count)
    let name = TerminalText.quoted(state.head.stream)
    for (label, index) in [("from", from), ("to", to)] where index >= count {
      throw MsglogError.refused(
        count == 0
          ? "cannot move in stream \(name): it has no items"
          : "\(label) index \(index) is out of range: stream \(name) has \(count) "
            + "\(count == 1 ? "item" : "items") (0…\(count - 1))")
    }
    let moved = state.order[Int(from)]
    if let id, id != moved {
      throw MsglogError.refused("the item at index \(from) is \(moved.text), not \(id.text)")
    }
    if from == to { return nil }
    let event = try append(.move(id: moved, from: from, to: to), time: time, to: &state)
    state.order.remove(at: Int(from))
    state.order.insert(moved, at: Int(to))
    return Outcome(event: event, index: to)
  }

  // MARK: - Helpers

  private func state(of stream: String) throws -> StreamState {
    if let cached = streams[stream] { return cached }
    let head = try writer.streamHead(stream) ?? StreamHead(stream: stream)
    let order = head.count == 0 ? [] : try writer.order(of: stream)
    let state = StreamState(head: head, order: order)
    streams[stream] = state
    return state
  }

  private func idEntry(_ id: ItemID) throws -> IdEntry? {
    if let pending = idEntries[id] { return pending }
    return try writer.idEntry(id)
  }

  private func freshID() throws -> ItemID {
    // A collision among random v4 UUIDs is not going to happen, but an id
    // imported from elsewhere could be anything, so check rather than assume.
    while true {
      let id = ItemID()
      if try idEntry(id) == nil { return id }
    }
  }

  private func append(_ op: Event.Op, time: Timestamp?, to state: inout StreamState) throws -> Event {
    let event = Event(
      seq: nextSeq, stream: state.head.stream, version: state.head.version + 1, time: time ?? now, op: op)
    try writer.appendRecord(EventRecord.encode(event), seq: event.seq)
    nextSeq += 1
    state.head.version = event.version
    state.head.lastSeq = event.seq
    state.dirty = true
    return event
  }

  /// Finds the live item a selector names, or says precisely why not.
  private func resolve(_ selector: ItemSelector, in state: StreamState) throws -> Int {
    let name = TerminalText.quoted(state.head.stream)
    switch selector {
    case .id(let id):
      if let index = state.order.firstIndex(of: id) { return index }
      guard let entry = try idEntry(id) else {
        throw MsglogError.refused("no item with id \(id.text) in stream \(name)")
      }
      if entry.removeSeq != 0 {
        throw MsglogError.refused("item \(id.text) was already removed (at seq \(entry.removeSeq))")
      }
      let home = try writer.event(at: entry.insertSeq)?.stream ?? "?"
      throw MsglogError.refused(
        "item \(id.text) is in stream \(TerminalText.quoted(home)), not \(name)",
        hint: "select its stream with --stream")
    case .prefix(let prefix):
      var matches: [Int] = []
      for (index, id) in state.order.enumerated() where id.text.hasPrefix(prefix) {
        matches.append(index)
        if matches.count > 5 { break }
      }
      switch matches.count {
      case 1: return matches[0]
      case 0: throw MsglogError.refused("no item in stream \(name) has an id starting with \(prefix)")
      default:
        let ids = matches.prefix(5).map { state.order[$0].text }.joined(separator: ", ")
        throw MsglogError.refused(
          "id prefix \(prefix) is ambiguous in stream \(name): it matches \(ids)\(matches.count > 5 ? ", …" : "")",
          hint: "give more characters of the id")
      }
    }
  }
}
