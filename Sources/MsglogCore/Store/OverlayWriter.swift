/// A write transaction in memory over a read of a store: what a session
/// writes stays here, what it reads comes from here first and then from
/// the store beneath, and nothing ever reaches the store.
///
/// A replica's local view is this: its events (the store) with its pending
/// changes performed on top by the ledger itself — the rules the remote
/// will apply — and thrown away after the command has read what it needs.
/// A command costs the pending changes it performs, not the size of the log.
///
/// - Warning: valid only while `base` is (the transaction it reads).
package final class OverlayWriter: LogWriter {
  let base: any LogReader
  /// The store's head when the overlay began: overlay events come after it.
  package let baseHead: UInt64
  private var records: [[UInt8]] = []
  /// The base's records an erase in the overlay blanked, by seq.
  private var replaced: [UInt64: [UInt8]] = [:]
  private var heads: [StreamName: StreamHead] = [:]
  /// Nodes written (or, as nil, deleted) here, by stream.
  private var nodes: [StreamName: [NodeID: TreeNode<Slot>?]] = [:]
  private var ids: [ItemID: IdEntry] = [:]
  /// Each stream's events appended here, in seq order.
  private var streamEvents: [StreamName: [UInt64]] = [:]

  package init(over base: any LogReader) throws {
    self.base = base
    baseHead = try base.headSeq()
  }

  /// What an overlay holds: the events appended and the derived rows
  /// written over its base's. A replica keeps its local view's
  /// (`SavedLocalView`), so that a read need not perform the pending
  /// changes again.
  package struct Contents {
    package var records: [[UInt8]] = []
    package var heads: [StreamName: StreamHead] = [:]
    package var nodes: [StreamName: [NodeID: TreeNode<Slot>?]] = [:]
    package var ids: [ItemID: IdEntry] = [:]
    package var streamEvents: [StreamName: [UInt64]] = [:]

    package init() {}
  }

  package var contents: Contents {
    var contents = Contents()
    (contents.records, contents.heads, contents.nodes) = (records, heads, nodes)
    (contents.ids, contents.streamEvents) = (ids, streamEvents)
    return contents
  }

  /// An overlay holding `contents` over `base`, whose head must be `baseHead`.
  package init(over base: any LogReader, baseHead: UInt64, restoring contents: Contents) {
    self.base = base
    self.baseHead = baseHead
    (records, heads, nodes) = (contents.records, contents.heads, contents.nodes)
    (ids, streamEvents) = (contents.ids, contents.streamEvents)
  }

  /// The events appended here (seq `baseHead + 1` on), in order.
  package var appendedCount: Int { records.count }

  // MARK: - Reading

  package func headSeq() throws -> UInt64 { baseHead + UInt64(records.count) }

  package var recordLayout: EventRecord.Layout { base.recordLayout }

  /// A trimmed base's: the overlay appends after it, never below.
  package func horizon() throws -> Horizon { try base.horizon() }

  package func bases() throws -> [StreamBase] { try base.bases() }

  package func retiredItems() throws -> [RetiredItem] { try base.retiredItems() }

  package func forEachRecord(from seq: UInt64, _ body: (UInt64, UnsafeRawBufferPointer) throws -> Bool) throws {
    var more = true
    if seq <= baseHead {
      try base.forEachRecord(from: seq) { seq, bytes in
        if let record = replaced[seq] {
          more = try record.withUnsafeBytes { try body(seq, $0) }
          return more
        }
        more = try body(seq, bytes)
        return more
      }
    }
    guard more else { return }
    var next = max(seq, baseHead + 1)
    while next <= baseHead + UInt64(records.count) {
      guard try records[Int(next - baseHead - 1)].withUnsafeBytes({ try body(next, $0) }) else { return }
      next += 1
    }
  }

  package func withRecord<R>(at seq: UInt64, _ body: (UnsafeRawBufferPointer) throws -> R) throws -> R? {
    if let record = replaced[seq] { return try record.withUnsafeBytes(body) }
    guard seq > baseHead else { return try base.withRecord(at: seq, body) }
    guard seq <= baseHead + UInt64(records.count) else { return nil }
    return try records[Int(seq - baseHead - 1)].withUnsafeBytes(body)
  }

  package func streamHead(_ stream: StreamName) throws -> StreamHead? {
    if let head = heads[stream] { return head }
    return try base.streamHead(stream)
  }

  package func streamHeads() throws -> [StreamHead] {
    var all: [StreamName: StreamHead] = [:]
    for head in try base.streamHeads() { all[head.stream] = head }
    for (stream, head) in heads { all[stream] = head }
    return all.values.sorted { $0.stream < $1.stream }
  }

  package func orderNode(_ id: NodeID, of stream: StreamName) throws -> TreeNode<Slot>? {
    if let written = nodes[stream]?[id] { return written }
    return try base.orderNode(id, of: stream)
  }

  package func idEntry(_ id: ItemID) throws -> IdEntry? {
    if let entry = ids[id] { return entry }
    return try base.idEntry(id)
  }

  /// The store's entries and these merged in id byte order, these winning.
  package func forEachIdEntry(from start: [UInt8], _ body: (ItemID, IdEntry) throws -> Bool) throws {
    let mine = ids.keys.filter { !$0.bytes.lexicographicallyPrecedes(start) }.sorted(
      by: ItemID.precedesInStorageOrder)
    var next = 0
    var more = true
    try base.forEachIdEntry(from: start) { id, entry in
      while next < mine.count && ItemID.precedesInStorageOrder(mine[next], id) {
        more = try body(mine[next], ids[mine[next]]!)
        next += 1
        guard more else { return false }
      }
      if next < mine.count && mine[next] == id {
        next += 1
        more = try body(id, ids[id]!)
      } else {
        more = try body(id, entry)
      }
      return more
    }
    while more && next < mine.count {
      more = try body(mine[next], ids[mine[next]]!)
      next += 1
    }
  }

  package func forEachStreamEvent(of stream: StreamName, from seq: UInt64, _ body: (UInt64) throws -> Bool) throws {
    var more = true
    if seq <= baseHead {
      try base.forEachStreamEvent(of: stream, from: seq) { seq in
        more = try body(seq)
        return more
      }
    }
    guard more else { return }
    for appended in streamEvents[stream] ?? [] where appended >= seq {
      guard try body(appended) else { return }
    }
  }

  /// Checkpoints are of the store's events only: an overlay takes none.
  package func checkpoint(of stream: StreamName, atOrBefore seq: UInt64) throws -> Checkpoint? {
    try base.checkpoint(of: stream, atOrBefore: min(seq, baseHead))
  }

  package func checkpointSeqs(of stream: StreamName) throws -> [UInt64] { try base.checkpointSeqs(of: stream) }

  package func lastStreamEvent(of stream: StreamName) throws -> UInt64? {
    if let last = streamEvents[stream]?.last { return last }
    return try base.lastStreamEvent(of: stream)
  }

  package func forEachStreamRecord(
    of stream: StreamName, downFrom seq: UInt64, _ body: (UInt64, UnsafeRawBufferPointer) throws -> Bool
  ) throws {
    for appended in (streamEvents[stream] ?? []).reversed() where appended <= seq {
      guard try withRecord(at: appended, { try body(appended, $0) })! else { return }
    }
    try base.forEachStreamRecord(of: stream, downFrom: min(seq, baseHead), body)
  }

  /// No summary and no counts: the session checks the store's tables only
  /// when it writes them, and an overlay never does.
  package func summary() throws -> RecordedCounts? { nil }
  package func tableCounts() throws -> TableCounts? { nil }

  // MARK: - Writing

  package func appendRecord(_ record: [UInt8], of event: Event) throws {
    precondition(event.seq == baseHead + UInt64(records.count) + 1, "records are appended in seq order")
    records.append(record)
  }

  package func replaceRecord(_ record: [UInt8], of event: Event) throws {
    if event.seq > baseHead {
      records[Int(event.seq - baseHead - 1)] = record
    } else {
      replaced[event.seq] = record
    }
  }

  package func putStreamHead(_ head: StreamHead) throws { heads[head.stream] = head }

  package func putOrderNode(_ node: TreeNode<Slot>, id: NodeID, of stream: StreamName) throws {
    nodes[stream, default: [:]][id] = .some(node)
  }

  package func deleteOrderNode(_ id: NodeID, of stream: StreamName) throws {
    nodes[stream, default: [:]][id] = .some(nil)
  }

  package func putIdEntry(_ entry: IdEntry, for id: ItemID) throws { ids[id] = entry }

  package func putStreamEvent(_ seq: UInt64, of stream: StreamName) throws {
    if streamEvents[stream]?.last != seq { streamEvents[stream, default: []].append(seq) }
  }

  package func putCheckpoint(_ checkpoint: Checkpoint) throws {}

  package func putSummary(_ summary: RecordedCounts) throws {}

  package func clearDerived() throws {
    preconditionFailure("an overlay is never rebuilt")
  }
}
