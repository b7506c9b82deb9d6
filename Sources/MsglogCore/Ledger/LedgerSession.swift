/// Validates commands against the current state and appends their events,
/// inside one write transaction of an `EventStore`.
///
/// Each stream's order lives in the store as a counted B+tree
/// (`StoredOrder`); a session reads the nodes a command touches, changes
/// them in a cache, and writes them back in `finish()`, with the stream
/// heads, the id index, the per-stream event index and any checkpoint due.
/// So a command costs the same on a stream of ten items or of a million, and
/// a batch (`append --lines`, `import`) validates each command against the
/// state the earlier ones left. Nothing is visible until the store commits.
package final class LedgerSession {
  /// How a session treats the events it produces.
  package enum Mode {
    /// Append them to the log: the normal write path.
    case append
    /// They are already in the log (a rebuild of the derived tables): check
    /// that each equals the stored record instead of appending it.
    case rebuild
  }

  package let writer: any LogWriter
  let now: Timestamp
  let mode: Mode
  /// How many commands a long batch (an import, a rebuild) performs between
  /// two `finish()`es, which write the derived rows so far into the
  /// transaction: the session's caches stay bounded however long the batch.
  package static let flushInterval = 65_536

  /// A stream gets a checkpoint once it has had at least this many events,
  /// and at least as many as it had items, since its last one: checkpoints
  /// then add up to no more than the log itself.
  package let checkpointInterval: UInt64
  package internal(set) var nextSeq: UInt64
  var streams: [StreamName: StreamState] = [:]
  /// Id index rows changed by this session, not yet stored.
  var idEntries: [ItemID: IdEntry] = [:]
  /// Id index rows read from the store since the last `finish()` (nil: no
  /// row): a batch looks its ids up in one request (`prefetch(ids:)`).
  private var storedEntries: [ItemID: IdEntry?] = [:]
  /// The derived tables' row counts, as this session leaves them; nil in a
  /// store that cannot count rows cheaply (and so keeps no summary).
  var summary: RecordedCounts?
  /// The summary row as the store holds it (nil: none yet): a session that
  /// changed no count writes no row, so a write that does nothing (an edit
  /// to the text the item has) leaves the database's bytes as they were.
  private var storedSummary: RecordedCounts?
  /// How many writes this session has handed its writer: a mark can be
  /// returned to only while none were handed over since.
  var writesSent = 0
  /// The origin of the events the command being performed appends (a
  /// replica's change), set for the length of one command.
  var origin: Origin?
  /// The erase that blanked the insert or edit being performed (an
  /// exported erased event imported, a rebuild): appended blank, as it was.
  var erasedAt: UInt64?
  /// How the records the command being performed appends are written: the
  /// store's layout, or a pulled record's own (`adopt`), for one command.
  var layout: EventRecord.Layout?

  struct StreamState {
    var head: StreamHead
    var tree: CountedTree<StoredNodes>
    /// The head as the store holds it (nil: the stream had none before
    /// this session): a head that did not change is not written again.
    let stored: StreamHead?
    var isNew: Bool { stored == nil }
  }

  /// Opens a session on `writer`. In append mode the derived tables are
  /// checked against the log first (row counts in O(1)), so that no event
  /// is ever computed from damaged state.
  package init(writer: any LogWriter, now: Timestamp, mode: Mode = .append, checkpointInterval: UInt64 = 256) throws {
    self.writer = writer
    self.now = now
    self.mode = mode
    self.checkpointInterval = max(checkpointInterval, 1)
    let counts = try writer.tableCounts()
    switch mode {
    case .append:
      if let counts { try Integrity.checkCounts(writer, counts: counts) }
      self.nextSeq = try writer.headSeq() + 1
      storedSummary = counts == nil ? nil : try writer.summary()
      self.summary = counts == nil ? nil : storedSummary ?? RecordedCounts()
    case .rebuild:
      self.nextSeq = 1
      self.summary = counts == nil ? nil : RecordedCounts()
    }
  }

  /// The stream's version as this session sees it.
  package func version(of stream: StreamName) throws -> UInt64 {
    if let state = streams[stream] { return state.head.version }
    return try writer.streamHead(stream)?.version ?? 0
  }

  /// Refuses with a conflict unless the stream is at `expected`.
  package func expect(version expected: UInt64, of stream: StreamName) throws {
    let actual = try version(of: stream)
    guard actual == expected else {
      throw MsglogError.versionConflict(stream: stream, expected: expected, actual: actual)
    }
  }

  /// Validates `request` and appends its event; nil when it changes nothing
  /// (a move onto itself, an edit to the same text, an undo already in
  /// effect), which appends nothing.
  ///
  /// - Parameter basis: the version of the stream the request was made at,
  ///   when the stream has moved on since (a rebase): its indices are
  ///   transformed to the head by the predecessor rule (`LedgerSession+Rebase`).
  package func perform(_ request: WriteRequest, rebasingFrom basis: UInt64? = nil) throws -> Outcome? {
    try Limits.check(request)
    // An exported undo or erased text names seqs as its own log numbered
    // them: imported at another seq (an export of one stream, or into a log
    // with events) it would name other events, or none. Said as it is, not
    // as a damaged log.
    if let exported = request.exportedSeq, exported != nextSeq, request.undoes != nil || request.erased != nil {
      throw MsglogError.invalidInput(
        .write(
          "its event was seq \(exported) of the exported log and would be seq \(nextSeq) here, but "
            + (request.undoes != nil ? "an undo" : "an erased text")
            + " names seqs of that log: it imports only at its own seq (a whole log's export, into an empty database)"))
    }
    var state = try takeState(of: request.stream)
    defer { streams[request.stream] = state }
    let undoes = request.undoes.map { Undoes(seq: $0, checked: false) }
    origin = request.origin
    erasedAt = request.erased
    defer {
      origin = nil
      erasedAt = nil
    }
    var outcome: Outcome?
    switch request.command {
    case .insert(var insert):
      if let basis, let index = insert.index { insert.index = try rebasedInsertIndex(index, from: basis, in: &state) }
      outcome = try performInsert(insert, time: request.time, undoes: undoes, on: &state)
    case .remove(let selector):
      outcome = try performRemove(selector, time: request.time, undoes: undoes, on: &state)
    case .move(var from, var to, var id):
      if let basis { (from, to, id) = try rebasedMove(from: from, to: to, from: basis, in: &state) }
      outcome = try performMove(from: from, to: to, id: id, time: request.time, undoes: undoes, on: &state)
    case .edit(let selector, let text, let sender):
      outcome = try performEdit(selector, text: text, sender: sender, time: request.time, undoes: undoes, on: &state)
    case .restore(let selector, let index):
      outcome = try performRestore(selector, at: index, time: request.time, undoes: undoes, on: &state)
    case .erase(let selector):
      outcome = try performErase(selector, time: request.time, on: &state)
    case .unsign(let selector, let edit):
      outcome = try performUnsign(selector, edit: edit, time: request.time, on: &state)
    case .undo(let seq, let sender):
      guard request.undoes == nil else {
        throw MsglogError.invalidInput(.write("an undo takes no \"undoes\": it computes what it undoes"))
      }
      outcome = try performUndo(seq, sender: sender, time: request.time, on: &state)
    }
    if basis != nil { outcome?.rebased = true }
    return outcome
  }

  /// The event the log holds at the seq a rebuild is replaying (see `replay`).
  private var recorded: Event?

  /// In rebuild mode: runs `request`, made from the event the log holds,
  /// through the write path again, checking that it gives that very event
  /// (compared with the one given, which the caller has just read).
  package func replay(_ request: WriteRequest, recorded event: Event) throws -> Outcome? {
    recorded = event
    defer { recorded = nil }
    return try perform(request)
  }

  /// Writes the derived rows of everything performed. The session can go on
  /// afterwards (a long import flushes now and then to bound its memory).
  package func finish() throws {
    writesSent += 1
    for (_, var state) in streams {
      let (placements, nodeDelta) = try state.tree.store.flush()
      try prefetch(ids: placements.lazy.map(\.0))
      for (id, leaf) in placements {
        guard var entry = try idEntry(id), entry.removeSeq == 0 else { continue }
        entry.leaf = leaf
        idEntries[id] = entry
      }
      if let nodes = summary?.nodes { summary?.nodes = UInt64(Int(nodes) + nodeDelta) }
      // A stream whose only command was refused has no event and gets no head.
      guard state.head.version > 0 else { continue }
      if state.isNew { summary?.streams += 1 }
      state.head.root = state.tree.root
      state.head.nextNode = state.tree.store.nextNode
      if state.head != state.stored { try writer.putStreamHead(state.head) }
    }
    // In key order: a B-tree takes sorted inserts page by page.
    for (id, entry) in idEntries.sorted(by: { ItemID.precedesInStorageOrder($0.key, $1.key) }) {
      try writer.putIdEntry(entry, for: id)
    }
    if var summary {
      summary.events = nextSeq - 1
      if summary != storedSummary { try writer.putSummary(summary) }
      self.summary = summary
      storedSummary = summary
    }
    streams.removeAll()
    idEntries.removeAll()
    storedEntries.removeAll()
  }

  /// Reads the id index rows of `ids` in one request, for the commands of a
  /// batch that name them (inserts with an id, removes by id).
  package func prefetch(ids: some Sequence<ItemID>) throws {
    guard writer.prefersBatchedReads else { return }
    let missing = ids.filter { idEntries[$0] == nil && storedEntries[$0] == nil }
    guard !missing.isEmpty else { return }
    let found = try writer.idEntries(missing)
    for id in missing { storedEntries[id] = .some(found[id]) }
  }

  /// Reads the id index rows the requests name (see `prefetch(ids:)`).
  package func prefetch(idsOf requests: ArraySlice<WriteRequest>) throws {
    // Nothing to gather for a store that reads rows one by one as cheaply.
    guard writer.prefersBatchedReads else { return }
    var ids: [ItemID] = []
    for request in requests {
      switch request.command {
      case .insert(let insert): if let id = insert.id { ids.append(id) }
      case .remove(.id(let id)), .edit(.id(let id), _, _), .restore(.id(let id), _), .erase(.id(let id)),
        .unsign(.id(let id), _):
        ids.append(id)
      case .remove(.prefix), .edit(.prefix, _, _), .restore(.prefix, _), .erase(.prefix), .unsign(.prefix, _), .move,
        .undo:
        break
      }
    }
    try prefetch(ids: ids)
  }

  // MARK: - Marks

  /// A point a session can return to: everything it holds then.
  package struct Mark {
    fileprivate var nextSeq: UInt64
    fileprivate var streams: [StreamName: StreamState]
    fileprivate var idEntries: [ItemID: IdEntry]
    fileprivate var storedEntries: [ItemID: IdEntry?]
    fileprivate var summary: RecordedCounts?
    fileprivate var writesSent: Int
  }

  /// Where the session is now, to take back one command of a batch that
  /// is refused (group commit: the others go on without it). Copies of
  /// values, shared until changed.
  package func mark() -> Mark {
    Mark(
      nextSeq: nextSeq, streams: streams, idEntries: idEntries, storedEntries: storedEntries, summary: summary,
      writesSent: writesSent)
  }

  /// Returns to `mark`, forgetting everything performed since: true when
  /// nothing had reached the writer since (a command is validated before it
  /// writes, so a refusal leaves nothing there). False when something had:
  /// the transaction then holds writes of the refused command and must be
  /// abandoned.
  package func rewind(to mark: Mark) -> Bool {
    guard writesSent == mark.writesSent else { return false }
    nextSeq = mark.nextSeq
    streams = mark.streams
    idEntries = mark.idEntries
    storedEntries = mark.storedEntries
    summary = mark.summary
    return true
  }

  // MARK: - Helpers

  /// The stream's state, taken out of the cache so that it is changed in place.
  /// The first time a session meets a stream its name is checked, and its
  /// head against the log (`Integrity.checkHead`): a missing or stale head must never
  /// lead to a second `v1` event.
  func takeState(of stream: StreamName) throws -> StreamState {
    if let cached = streams.removeValue(forKey: stream) { return cached }
    // A name made without `StreamName(validating:)` is checked here, once.
    try Limits.checkStreamName(stream.text)
    let stored = try writer.streamHead(stream)
    if mode == .append { try Integrity.checkHead(stored, of: stream, in: writer) }
    let head = stored ?? StreamHead(stream: stream)
    let nodes = StoredNodes(writer: writer, stream: stream, nextNode: head.nextNode)
    return StreamState(head: head, tree: StoredOrder.tree(nodes, head: head), stored: stored)
  }

  func idEntry(_ id: ItemID) throws -> IdEntry? {
    if let pending = idEntries[id] { return pending }
    if let stored = storedEntries[id] { return stored }
    let stored = try writer.idEntry(id)
    storedEntries[id] = .some(stored)
    return stored
  }

  func freshID() throws -> ItemID {
    // A collision among random v4 UUIDs is not going to happen, but an id
    // imported from elsewhere could be anything, so check rather than
    // assume — against the store only if its own constraint does not
    // refuse a duplicate (a lookup is a round trip to a server).
    while true {
      let id = ItemID.random()
      if writer.enforcesUniqueInsertedIDs ? idEntries[id] == nil : try idEntry(id) == nil { return id }
    }
  }

  /// The event an undo appends undoes `seq`; `checked` when the undo
  /// computed it (an exported line's `undoes` is checked on append).
  struct Undoes {
    var seq: UInt64
    var checked: Bool
  }

  func append(_ op: Event.Op, time: Timestamp?, undoes: Undoes? = nil, to state: inout StreamState) throws -> Event {
    // Every event passes the limits here, whichever door its write came through.
    var erased: UInt64? = nil
    switch op {
    case .insert, .edit: erased = erasedAt
    case .remove, .move, .restore, .erase, .unsign: break
    }
    if mode == .append {
      if erased != nil {
        if let origin { try Limits.check(origin, at: time ?? now) }
      } else {
        try Limits.check(op, time: time ?? now, origin: origin)
      }
    }
    if let undoes, !undoes.checked { try checkUndoes(undoes.seq, by: op, in: &state) }
    let event = Event(
      seq: nextSeq, stream: state.head.stream, version: state.head.version + 1, time: time ?? now, op: op,
      undoes: undoes?.seq, origin: origin, erased: erased)
    writesSent += 1
    switch mode {
    case .append:
      try writer.appendRecord(EventRecord.encode(event, layout: layout ?? writer.recordLayout), of: event)
    case .rebuild:
      guard try (recorded ?? writer.event(at: event.seq)) == event else {
        throw MsglogError.eventDoesNotFit(
          seq: event.seq, reason: "rebuilding it gave a different event than the log holds")
      }
    }
    try writer.putStreamEvent(event.seq, of: event.stream)
    nextSeq += 1
    state.head.version = event.version
    state.head.lastSeq = event.seq
    return event
  }

  /// Takes a checkpoint of the stream when enough has happened since the last.
  func checkpointIfDue(_ state: inout StreamState) throws {
    let since = state.head.version - state.head.checkpointVersion
    guard since >= max(checkpointInterval, state.head.checkpointCount) else { return }
    let slots = try state.tree.elements()
    writesSent += 1
    try writer.putCheckpoint(
      Checkpoint(stream: state.head.stream, seq: state.head.lastSeq, version: state.head.version, slots: slots))
    state.head.checkpointVersion = state.head.version
    state.head.checkpointCount = UInt64(slots.count)
    summary?.checkpoints += 1
  }

  /// The stream an item was inserted into, from its insert record.
  func home(of entry: IdEntry) throws -> StreamName? {
    try writer.event(at: entry.insertSeq)?.stream
  }

  /// Whether the item was inserted into `stream`: the record's checksum and
  /// stream name only, without decoding the rest (a remove does this every time).
  func lives(_ entry: IdEntry, in stream: StreamName) throws -> Bool {
    let name = stream.bytes
    return try writer.withRecord(at: entry.insertSeq) { bytes in
      try name.withUnsafeBytes { name in
        do {
          return try EventRecord.positional(bytes, ifStream: name) != nil
        } catch {
          throw corruption(seq: entry.insertSeq, "\(error)")
        }
      }
    } ?? false
  }

  /// Refuses an item inserted into another stream than `stream`, naming
  /// the stream it is in.
  func checkHome(of entry: IdEntry, id: ItemID, is stream: StreamName) throws {
    guard try lives(entry, in: stream) else {
      throw MsglogError.itemInAnotherStream(id, home: try home(of: entry) ?? StreamName("?"), stream: stream)
    }
  }

  /// Finds the live item a selector names, or says precisely why not.
  func resolve(_ selector: ItemSelector, in state: inout StreamState) throws -> Int {
    let stream = state.head.stream
    switch selector {
    case .id(let id):
      guard let entry = try idEntry(id) else { throw MsglogError.noSuchItem(id, stream: stream) }
      try refuseRetired(entry, id: id, in: stream)
      // Where it is comes first, removed or not: for another stream's
      // removed item, the hint to restore it here would lead to that refusal.
      try checkHome(of: entry, id: id, is: stream)
      if entry.removeSeq != 0 { throw try erasure(of: entry, id: id) ?? .itemRemoved(id, removeSeq: entry.removeSeq) }
      return try index(of: id, entry: entry, in: &state)
    case .prefix(let given):
      let found: (ItemID, IdEntry)
      do {
        found = try uniqueMatch(of: given, in: stream, removed: [false]) { .noPrefixMatch(prefix: $0, stream: stream) }
      } catch let error as MsglogError {
        // No live item: one removed item it names says what its full id would.
        guard case .noPrefixMatch = error else { throw error }
        throw try removedMatch(of: given, in: stream) ?? error
      }
      return try index(of: found.0, entry: found.1, in: &state)
    }
  }

  /// Refuses an item a trim retired (removed before the horizon): nothing
  /// of it is left but its id (`RetiredItem`), which stays used.
  func refuseRetired(_ entry: IdEntry, id: ItemID, in stream: StreamName) throws {
    guard entry.removeSeq != 0 else { return }
    let horizon = try writer.horizon().seq
    guard entry.isRemoved(before: horizon) else { return }
    // Where it is comes first, as for any item: its base row says (the
    // insert that would is gone). Read only on this rare way, named by id.
    if let home = try writer.retiredItems().first(where: { $0.id == id })?.stream, home != stream {
      throw MsglogError.itemInAnotherStream(id, home: home, stream: stream)
    }
    throw MsglogError.historyTrimmed(horizon: horizon)
  }

  /// The one removed item of `stream` a prefix names, as its full id would
  /// report it (removed, or erased); nil when it names none, or several.
  /// Any other failure (the store, a damaged record) is thrown.
  private func removedMatch(of given: String, in stream: StreamName) throws -> MsglogError? {
    let found: (ItemID, IdEntry)
    do {
      found = try uniqueMatch(of: given, in: stream, removed: [true]) { .noPrefixMatch(prefix: $0, stream: stream) }
    } catch MsglogError.noPrefixMatch, MsglogError.ambiguousPrefix {
      return nil
    }
    return try erasure(of: found.1, id: found.0) ?? .itemRemoved(found.0, removeSeq: found.1.removeSeq)
  }

  /// The one item of `stream` whose id starts with `given`, among the live
  /// ones, the removed ones or both (`removed`, walked in that order); the
  /// error `none` makes when there is none, `ambiguousPrefix` naming five
  /// when there are several.
  func uniqueMatch(
    of given: String, in stream: StreamName, removed: [Bool], none: (String) -> MsglogError
  ) throws -> (ItemID, IdEntry) {
    let prefix = try ItemSelector.checkedPrefix(given)
    var matches: [(ItemID, IdEntry)] = []
    let horizon = try writer.horizon().seq
    for removed in removed {
      try forEachID(withPrefix: prefix, removed: removed) { id, entry in
        // A retired item (`refuseRetired`) is no item to find by a prefix.
        if entry.isRemoved(before: horizon) { return true }
        if try lives(entry, in: stream) { matches.append((id, entry)) }
        return matches.count <= 5
      }
    }
    switch matches.count {
    case 1: return matches[0]
    case 0: throw none(prefix)
    default:
      throw MsglogError.ambiguousPrefix(
        prefix: prefix, stream: stream, matches: Array(matches.prefix(5).map(\.0)), more: matches.count > 5)
    }
  }

  /// The item's position, from the leaf that holds it.
  func index(of id: ItemID, entry: IdEntry, in state: inout StreamState) throws -> Int {
    let leaf = state.tree.store.placements[id] ?? entry.leaf
    guard leaf != 0, let index = try state.tree.index(inLeaf: leaf, where: { $0.id == id }) else {
      throw MsglogError.derivedDamage(
        DerivedDamage(.order, "the order of stream \(TerminalText.quoted(state.head.stream)) does not hold \(id.text)"))
    }
    return index
  }

  /// Live (or, with `removed`, removed) ids whose text form starts with
  /// `prefix`, from the id index (a range of keys) and from this session's
  /// own inserts.
  func forEachID(withPrefix prefix: String, removed: Bool, _ body: (ItemID, IdEntry) throws -> Bool) throws {
    // The first key the prefix can match: its digits as bytes.
    let start = Hex.bytes(prefix.utf8.lazy.filter { $0 != UInt8(ascii: "-") }) ?? []
    var seen: Set<ItemID> = []
    for (id, entry) in idEntries where (entry.removeSeq != 0) == removed && id.text.hasPrefix(prefix) {
      seen.insert(id)
      guard try body(id, entry) else { return }
    }
    try writer.forEachIdEntry(from: start) { id, stored in
      guard id.text.hasPrefix(prefix) else { return false }
      let entry = idEntries[id] ?? stored
      guard (entry.removeSeq != 0) == removed, !seen.contains(id) else { return true }
      return try body(id, entry)
    }
  }
}
