import MsglogCore

/// `LogReader`: a statement per read (a page per statement for a range),
/// or none where the transaction's `cache` knows the answer.
extension PostgresStore.Access {
  func headSeq() throws -> UInt64 {
    if let head = state.head { return head }
    let value = try query(.events, PostgresSchema.headSeq).uint64(0, 0) ?? 0
    state.head = value
    return value
  }

  /// The log in pages of 4,096 records, from the horizon at the earliest:
  /// the records a trimmed log keeps below it are read by seq only.
  func forEachRecord(from seq: UInt64, _ body: (UInt64, UnsafeRawBufferPointer) throws -> Bool) throws {
    var next = max(seq, try horizon().seq)
    try forEachRow(of: .events, in: .of(4096), { PostgresSchema.records(from: next, limit: $0) }) { rows, row in
      let seq = rows.uint64(row, 0)!
      guard try rows.withBytes(row, 1, { try body(seq, $0) }) else { return false }
      next = seq + 1
      return true
    }
  }

  func withRecord<R>(at seq: UInt64, _ body: (UnsafeRawBufferPointer) throws -> R) throws -> R? {
    for case let (last?)? in cache.last.values where last.seq == seq {
      return try last.record.withUnsafeBytes(body)
    }
    let rows = try query(.events, PostgresSchema.record(at: seq))
    return rows.count == 0 ? nil : try rows.withBytes(0, 0, body)
  }

  func forEachRecord(at seqs: [UInt64], _ body: (UInt64, UnsafeRawBufferPointer) throws -> Void) throws {
    guard !seqs.isEmpty else { return }
    let wanted = seqs.sorted()
    if let first = wanted.first, let last = wanted.last, last - first < UInt64(wanted.count) * 2 {
      // Dense (a list of appended items): one index range scan reads
      // neighbouring rows from neighbouring pages, cheaper than as many
      // probes; the few rows between are skipped here.
      let rows = try query(.events, PostgresSchema.records(between: first, and: last))
      var next = 0
      for row in 0..<rows.count {
        let seq = rows.uint64(row, 0)!
        while next < wanted.count, wanted[next] < seq { next += 1 }
        guard next < wanted.count else { return }
        if wanted[next] == seq { try rows.withBytes(row, 1) { try body(seq, $0) } }
      }
      return
    }
    let rows = try query(.events, PostgresSchema.records(at: seqs))
    for row in 0..<rows.count { try rows.withBytes(row, 1) { try body(rows.uint64(row, 0)!, $0) } }
  }

  func streamHead(_ stream: StreamName) throws -> StreamHead? {
    if let cached = cache.heads[stream] { return cached }
    let rows = try query(.streams, PostgresSchema.streamHead(stream))
    return rows.count == 0 ? nil : try rows.withBytes(0, 0) { try DerivedRows.decodeHead(stream: stream, $0) }
  }

  func streamHeads() throws -> [StreamHead] {
    let rows = try query(.streams, PostgresSchema.streamHeads)
    return try (0..<rows.count).map { row in
      let stream = try rows.streamName(row, 0, in: .heads)
      return try rows.withBytes(row, 1) { try DerivedRows.decodeHead(stream: stream, $0) }
    }
  }

  func streamHeadNames() throws -> (names: [StreamName], notNames: Int) {
    let rows = try query(.streams, PostgresSchema.streamHeadNames)
    let names = (0..<rows.count).compactMap { row in try? rows.streamName(row, 0, in: .heads) }
    return (names, rows.count - names.count)
  }

  func orderNode(_ id: NodeID, of stream: StreamName) throws -> TreeNode<Slot>? {
    try orderNodes([id], of: stream)[id]
  }

  func orderNodes(_ ids: [NodeID], of stream: StreamName) throws -> [NodeID: TreeNode<Slot>] {
    guard !ids.isEmpty else { return [:] }
    var cached: [NodeID: TreeNode<Slot>] = [:]
    for id in ids { cached[id] = cache.nodes[PostgresStore.NodeKey(stream: stream, n: id)] }
    if cached.count == ids.count { return cached }
    let rows = try query(.nodes, PostgresSchema.nodes(ids, of: stream))
    var nodes: [NodeID: TreeNode<Slot>] = [:]
    for row in 0..<rows.count {
      let id = rows.uint64(row, 0)!
      let node = try rows.withBytes(row, 1) { try DerivedRows.decodeNode(id, of: stream, $0) }
      nodes[id] = node
      // A writer's path through the tree, for its next write (`KnownState`).
      if writing { cache.nodes[PostgresStore.NodeKey(stream: stream, n: id)] = node }
    }
    return nodes
  }

  func idEntry(_ id: ItemID) throws -> IdEntry? { try idEntries([id])[id] }

  func idEntries(_ ids: [ItemID]) throws -> [ItemID: IdEntry] {
    guard !ids.isEmpty else { return [:] }
    let rows = try query(.ids, PostgresSchema.idEntries(ids))
    var entries: [ItemID: IdEntry] = [:]
    for row in 0..<rows.count {
      let id = rows.withBytes(row, 0) { ItemID(bytes: $0) }
      entries[id] = try rows.withBytes(row, 1) { try DerivedRows.decodeIdEntry(id, $0) }
    }
    return entries
  }

  /// The id rows in pages of 4,096, from the first id at or after `start`
  /// (padded to 16 bytes).
  func forEachIdEntry(from start: [UInt8], _ body: (ItemID, IdEntry) throws -> Bool) throws {
    // (Made inside the closure: its pointer is only valid there.)
    var next = (start + [UInt8](repeating: 0, count: 16)).prefix(16).withUnsafeBytes { ItemID(bytes: $0) }
    var including = true
    try forEachRow(of: .ids, in: .of(4096), { PostgresSchema.idEntries(from: next, including: including, limit: $0) }) {
      rows, row in
      let id = rows.withBytes(row, 0) { ItemID(bytes: $0) }
      guard try body(id, try rows.withBytes(row, 1) { try DerivedRows.decodeIdEntry(id, $0) }) else { return false }
      next = id
      including = false
      return true
    }
  }

  /// The events table is its own per-stream index here, read in pages of
  /// 65,536 seqs; from the horizon on, as a trimmed LMDB log's index.
  func forEachStreamEvent(of stream: StreamName, from seq: UInt64, _ body: (UInt64) throws -> Bool) throws {
    var next = max(seq, try horizon().seq)
    try forEachRow(of: .events, in: .of(65536), { PostgresSchema.streamSeqs(of: stream, from: next, limit: $0) }) {
      rows, row in
      let seq = rows.uint64(row, 0)!
      guard try body(seq) else { return false }
      next = seq + 1
      return true
    }
  }

  /// Newest first, in pages growing from 16 to 4,096: an undo usually
  /// needs the last few events only, a rebase those since the version it
  /// was made at.
  /// Down to the horizon.
  func forEachStreamRecord(
    of stream: StreamName, downFrom seq: UInt64, _ body: (UInt64, UnsafeRawBufferPointer) throws -> Bool
  ) throws {
    var next = seq
    let floor = try horizon().seq
    guard next >= floor else { return }
    let pages = Pages(first: 16, growth: 4, largest: 4096)
    try forEachRow(
      of: .events, in: pages, { PostgresSchema.streamRecords(of: stream, downFrom: next, to: floor, limit: $0) }
    ) { rows, row in
      let seq = rows.uint64(row, 0)!
      guard try rows.withBytes(row, 1, { try body(seq, $0) }), seq > floor else { return false }
      next = seq - 1
      return true
    }
  }

  func lastStreamEvent(of stream: StreamName) throws -> UInt64? {
    if let cached = cache.last[stream] { return cached?.seq }
    return try query(.events, PostgresSchema.lastStreamSeq(of: stream, from: try horizon().seq)).uint64(0, 0)
  }

  func checkpoint(of stream: StreamName, atOrBefore seq: UInt64) throws -> Checkpoint? {
    let rows = try query(.checkpoints, PostgresSchema.checkpoint(of: stream, atOrBefore: seq))
    guard rows.count > 0 else { return nil }
    let seq = rows.uint64(0, 0)!
    return try rows.withBytes(0, 1) { try DerivedRows.decodeCheckpoint(stream: stream, seq: seq, $0) }
  }

  func checkpointSeqs(of stream: StreamName) throws -> [UInt64] {
    let rows = try query(.checkpoints, PostgresSchema.checkpointSeqs(of: stream))
    return (0..<rows.count).map { rows.uint64($0, 0)! }
  }

  func summary() throws -> RecordedCounts? {
    let rows = try query(.meta, PostgresSchema.summary)
    return rows.count == 0 ? nil : try rows.withBytes(0, 0) { try DerivedRows.decodeSummary($0) }
  }

  /// Counting a table's rows is a scan in PostgreSQL, too slow for every
  /// write: the database's own constraints (unique seqs, stream versions
  /// and inserted ids) guard the log instead.
  func tableCounts() throws -> TableCounts? { nil }

  /// Every table's rows counted, in one statement, for `verify`. The
  /// events table is its own per-stream index, from the horizon on; a
  /// trimmed log counts what it dropped, so the counts still match the head.
  func rowCounts() throws -> TableCounts? {
    let horizon = try horizon()
    let rows = try query(.events, PostgresSchema.rowCounts(horizon: horizon.seq))
    return TableCounts(
      events: (rows.uint64(0, 0) ?? 0) + horizon.droppedEvents,
      streamEvents: (rows.uint64(0, 5) ?? 0) + horizon.droppedStreamEvents, heads: rows.uint64(0, 1) ?? 0,
      ids: rows.uint64(0, 2) ?? 0, nodes: rows.uint64(0, 3) ?? 0, checkpoints: rows.uint64(0, 4) ?? 0)
  }
}
