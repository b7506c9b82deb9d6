/// An import into streams that have no events yet, built in one pass in
/// memory and written table by table in key order (`BulkLoading`), rather
/// than command by command through a `LedgerSession`.
///
/// It writes exactly what a ledger session would — the same records and,
/// byte for byte, the same derived rows — because it performs the same
/// checks and grows each order tree by the same `CountedTree` operations
/// in the same order, in a store (`BuiltNodes`) that numbers nodes as
/// `StoredNodes` does. (A tree built bottom-up from the final list would
/// hold the same items in other nodes; and a remove names its item by id,
/// so its position must be known as each event comes.) What changes is
/// where the work happens: nodes, ids and the event index live in compact
/// arrays until the end (`ItemTable`, runs of seqs) instead of being read
/// from and written back to the store at every command, and every table is
/// then appended in key order; the records and the checkpoints are put as
/// they come. The requests themselves come a piece at a time
/// (`perform(_:append:)`), so that a long import holds about 40 bytes an
/// event here, besides its order trees (see docs/PERFORMANCE.md, "Import").
///
/// Anything it does not handle itself — a stream that has events, an id
/// the log already knows, an id prefix, a command the ledger would refuse,
/// a derived table that disagrees with the log — makes it give up (`Unfit`)
/// before the caller commits anything: the caller then runs the ledger,
/// which writes or refuses exactly as it always has, with its own words.
package struct BulkImport {
  /// The import is not one this path builds; nothing of it may be committed.
  package struct Unfit: Error {
    package init() {}
  }

  let writer: any BulkLoading
  let now: Timestamp
  let checkpointInterval: UInt64
  /// The log had no event before: no id can be in it yet.
  let logWasEmpty: Bool
  /// The seq of the import's first event.
  let firstSeq: UInt64
  package private(set) var nextSeq: UInt64
  /// Events appended (a move onto itself appends none).
  package private(set) var appended = 0
  private var summary: RecordedCounts
  /// Whether the store keeps the summary: as `LedgerSession`, not one that
  /// cannot count its rows cheaply (`tableCounts` is nil).
  private let keepsSummary: Bool
  private var streams: [StreamBuild] = []
  private var streamIndex: [StreamName: Int] = [:]
  /// The stream of the previous request: a run of lines for one stream
  /// finds it without hashing its name.
  private var current = -1
  /// Per event of the import that inserts: its item's id, leaf, remove
  /// and stream; and the index of the ids inserted.
  private let items: ItemTable
  /// How the store writes records, and the buffer each is encoded into.
  private let layout: EventRecord.Layout
  private var record: [UInt8] = []

  /// One stream's state as the import builds it: what a ledger session
  /// keeps for it, with its nodes in memory.
  struct StreamBuild {
    var head: StreamHead
    var tree: CountedTree<BuiltNodes>
    /// The stream's events, for the per-stream event index: runs of
    /// consecutive seqs (one for an import of a single stream).
    var events: [(first: UInt64, count: UInt64)] = []
  }

  /// The most events one bulk import appends; a longer import is the ledger's.
  package static let maximumEvents = ItemTable.maximumCapacity

  /// Starts a bulk import of at most `capacity` events on `writer`.
  ///
  /// Throws `Unfit` when the derived tables disagree with the log (the
  /// ledger says how); the store's own failures pass through.
  package init(writer: any BulkLoading, now: Timestamp, checkpointInterval: UInt64, capacity: Int) throws {
    guard capacity <= Self.maximumEvents else { throw Unfit() }
    self.writer = writer
    self.now = now
    self.checkpointInterval = max(checkpointInterval, 1)
    let counts = try writer.tableCounts()
    if let counts { try Self.fit { try Integrity.checkCounts(writer, counts: counts) } }
    self.keepsSummary = counts != nil
    let head = try writer.headSeq()
    self.logWasEmpty = head == 0
    self.firstSeq = head + 1
    self.nextSeq = head + 1
    self.summary = counts == nil ? RecordedCounts() : try writer.summary() ?? RecordedCounts()
    self.items = ItemTable(firstSeq: head + 1, capacity: capacity)
    self.layout = writer.recordLayout
  }

  /// Runs `body`, turning a refusal (a `MsglogError`, derived damage) into `Unfit`.
  static func fit<R>(_ body: () throws -> R) throws -> R {
    do {
      return try body()
    } catch is MsglogError {
      throw Unfit()
    } catch is DerivedDamage {
      throw Unfit()
    }
  }

  /// Whether the bulk path builds `request` at all: inserts, removes by id
  /// and moves, with no `undoes`. An import holding anything else (an edit,
  /// a restore, an undo) goes the ledger's way from the start.
  package static func builds(_ request: WriteRequest) -> Bool {
    // An event with an origin (a replica's change, exported) goes the ledger's way.
    guard request.undoes == nil, request.origin == nil, request.erased == nil else { return false }
    switch request.command {
    case .insert, .remove(.id), .move: return true
    case .remove(.prefix), .edit, .restore, .undo, .erase, .unsign: return false
    }
  }

  // MARK: - Commands

  /// Performs `request` as `LedgerSession.perform` would, appending its
  /// event and record through `append`; throws `Unfit` wherever the ledger
  /// would refuse it or would need the store to decide.
  package mutating func perform(_ request: WriteRequest, append: (Event, UnsafeRawBufferPointer) throws -> Void)
    throws
  {
    // An exported undo (`undoes`) is checked against the events it names:
    // the ledger's work (`LedgerSession+Undo`); so is an origin or an erasure.
    guard Self.builds(request) else { throw Unfit() }
    // More events than the import was made for (its input grew): the ledger has no such bound.
    guard nextSeq - firstSeq < UInt64(items.capacity) else { throw Unfit() }
    do { try Limits.check(request) } catch { throw Unfit() }
    let s = try stream(request.stream)
    switch request.command {
    case .insert(let insert):
      try performInsert(insert, time: request.time, in: s, append: append)
    case .remove(let selector):
      guard case .id(let id) = selector else { throw Unfit() }
      try performRemove(id, time: request.time, in: s, append: append)
    case .move(let from, let to, let id):
      try performMove(from: from, to: to, id: id, time: request.time, in: s, append: append)
    case .edit, .restore, .undo, .erase, .unsign:
      // Working together (edits, restores, undos): the ledger's path, which
      // also writes the record format and database format they need.
      throw Unfit()
    }
  }

  private mutating func performInsert(
    _ insert: InsertRequest, time: Timestamp?, in s: Int, append: (Event, UnsafeRawBufferPointer) throws -> Void
  ) throws {
    let count = streams[s].tree.count
    let index = insert.index ?? count
    guard (0...count).contains(index) else { throw Unfit() }
    let id: ItemID
    if let requested = insert.id {
      guard try isUnused(requested) else { throw Unfit() }
      id = requested
    } else {
      var fresh = ItemID.random()
      while try !isUnused(fresh) { fresh = ItemID.random() }
      id = fresh
    }
    let seq = try self.append(
      .insert(id: id, index: UInt64(index), text: insert.text, sender: insert.sender), time: time, in: s,
      append: append)
    items.setInserted(id, into: s, at: seq)
    try streams[s].tree.insert(Slot(id: id, seq: seq), at: index)
    streams[s].head.count += 1
    summary.ids += 1
    try checkpointIfDue(s)
  }

  private mutating func performRemove(
    _ id: ItemID, time: Timestamp?, in s: Int, append: (Event, UnsafeRawBufferPointer) throws -> Void
  ) throws {
    // An id the import has not inserted is in the log, in another stream
    // (these have no events), or nowhere: the ledger says which.
    guard let insertSeq = items.insertSeq(of: id), items.removeSeq(of: insertSeq) == 0,
      items.stream(of: insertSeq) == s,
      let index = try streams[s].tree.index(inLeaf: items.leaf(of: insertSeq), where: { $0.id == id })
    else { throw Unfit() }
    let seq = try self.append(.remove(id: id, index: UInt64(index)), time: time, in: s, append: append)
    try streams[s].tree.remove(at: index)
    streams[s].head.count -= 1
    items.setRemoved(insertSeq, by: seq)
    try checkpointIfDue(s)
  }

  private mutating func performMove(
    from: Int, to: Int, id: ItemID?, time: Timestamp?, in s: Int,
    append: (Event, UnsafeRawBufferPointer) throws -> Void
  ) throws {
    let count = streams[s].tree.count
    guard (0..<count).contains(from), (0..<count).contains(to) else { throw Unfit() }
    let moved = try streams[s].tree.element(at: from).id
    if let id, id != moved { throw Unfit() }
    if from == to { return }
    _ = try self.append(.move(id: moved, from: UInt64(from), to: UInt64(to)), time: time, in: s, append: append)
    try streams[s].tree.move(from: from, to: to)
    try checkpointIfDue(s)
  }

  // MARK: - Helpers

  /// The stream's index in `streams`; a stream seen for the first time must
  /// have no head (and, as the ledger checks, no indexed events).
  private mutating func stream(_ name: StreamName) throws -> Int {
    if current >= 0, streams[current].head.stream == name { return current }
    if let known = streamIndex[name] {
      current = known
      return known
    }
    try Self.fit {
      try Limits.checkStreamName(name.text)
      guard try writer.streamHead(name) == nil else { throw Unfit() }
      try Integrity.checkHead(nil, of: name, in: writer)
    }
    let head = StreamHead(stream: name)
    let nodes = BuiltNodes(items: items)
    let tree = CountedTree(
      store: nodes, leafCapacity: StoredOrder.leafCapacity, fanout: StoredOrder.fanout)
    streams.append(StreamBuild(head: head, tree: tree))
    current = streams.count - 1
    streamIndex[name] = current
    return current
  }

  /// Whether no item has ever had `id`, in this import or in the log (or
  /// the store refuses it if the log has: see `BulkLoading`).
  private func isUnused(_ id: ItemID) throws -> Bool {
    if items.insertSeq(of: id) != nil { return false }
    if logWasEmpty || writer.enforcesUniqueInsertedIDs { return true }
    return try writer.idEntry(id) == nil
  }

  private mutating func append(
    _ op: Event.Op, time: Timestamp?, in s: Int, append: (Event, UnsafeRawBufferPointer) throws -> Void
  ) throws -> UInt64 {
    let seq = nextSeq
    let event = Event(
      seq: seq, stream: streams[s].head.stream, version: streams[s].head.version + 1, time: time ?? now, op: op)
    EventRecord.encode(event, layout: layout, into: &record)
    try record.withUnsafeBytes { try append(event, $0) }
    nextSeq += 1
    appended += 1
    if let last = streams[s].events.last, last.first + last.count == seq {
      streams[s].events[streams[s].events.count - 1].count += 1
    } else {
      streams[s].events.append((seq, 1))
    }
    streams[s].head.version = event.version
    streams[s].head.lastSeq = seq
    return seq
  }

  /// Takes a checkpoint when `LedgerSession.checkpointIfDue` would.
  private mutating func checkpointIfDue(_ s: Int) throws {
    let head = streams[s].head
    let since = head.version - head.checkpointVersion
    guard since >= max(checkpointInterval, head.checkpointCount) else { return }
    let tree = streams[s].tree
    let row = try DerivedRows.encodeCheckpoint(
      stream: head.stream, seq: head.lastSeq, version: head.version, count: tree.count
    ) { add in
      try tree.forEach {
        add($0)
        return true
      }
    }
    // Put now, not kept to the end: a million items' checkpoints are 50 MB.
    var key: [UInt8] = []
    Self.streamKey(head.stream, head.lastSeq, into: &key)
    try writer.putAscending(.checkpoints) { put in
      try key.withUnsafeBytes { k in try row.withUnsafeBytes { try put(k, $0) } }
    }
    streams[s].head.checkpointVersion = head.version
    streams[s].head.checkpointCount = UInt64(tree.count)
    summary.checkpoints += 1
  }

  // MARK: - Writing

  /// Writes every derived row of the import: heads, order trees, the event
  /// index, id rows (each table in key order; the checkpoints were put as they were taken), and the summary
  /// where the store keeps one.
  package mutating func finish() throws {
    // Bytewise name order, which is the order of every per-stream key.
    let order = streams.indices.sorted { streams[$0].head.stream < streams[$1].head.stream }
    for s in order {
      streams[s].head.root = streams[s].tree.root
      streams[s].head.nextNode = streams[s].tree.store.nextNode
      try writer.putStreamHead(streams[s].head)
      summary.streams += 1
      summary.nodes += UInt64(streams[s].tree.store.liveNodes)
    }
    var key: [UInt8] = []
    try writer.putAscending(.order) { put in
      for s in order {
        let stream = streams[s].head.stream
        for (id, node) in streams[s].tree.store.nodes.enumerated() {
          guard let node else { continue }
          let value = DerivedRows.encode(node, id: NodeID(id), of: stream)
          Self.streamKey(stream, NodeID(id), into: &key)
          try key.withUnsafeBytes { k in try value.withUnsafeBytes { try put(k, $0) } }
        }
      }
    }
    try writer.putAscending(.streamEvents) { put in
      for s in order {
        // The stream's part of the key made once; each seq is then its last eight bytes.
        Self.streamKey(streams[s].head.stream, 0, into: &key)
        let seqAt = key.count - 8
        for run in streams[s].events {
          for seq in run.first..<(run.first + run.count) {
            key.withUnsafeMutableBytes { $0.storeBytes(of: seq.bigEndian, toByteOffset: seqAt, as: UInt64.self) }
            try key.withUnsafeBytes { try put($0, UnsafeRawBufferPointer(start: nil, count: 0)) }
          }
        }
      }
    }
    try writeIds()
    summary.events = nextSeq - 1
    if keepsSummary { try writer.putSummary(summary) }
    try writer.finishLoading()
  }

  /// The id rows, in id order (bytewise).
  private func writeIds() throws {
    let seqs = items.insertsInIDOrder()
    try writer.putAscending(.ids) { put in
      for seq in seqs {
        let id = items.id(insertedAt: seq)
        let removed = items.removeSeq(of: seq)
        let entry = IdEntry(insertSeq: seq, removeSeq: removed, leaf: removed == 0 ? items.leaf(of: seq) : 0)
        try id.withUnsafeBytes { k in try DerivedRows.withUnsafeEncoded(entry, for: id) { try put(k, $0) } }
      }
    }
  }

  /// `DerivedRows.streamKey`, into a buffer used again for every row.
  static func streamKey(_ stream: StreamName, _ n: UInt64, into key: inout [UInt8]) {
    key.removeAll(keepingCapacity: true)
    key.append(contentsOf: stream.text.utf8)
    key.append(0)
    key.appendBigEndian(n)
  }
}
