import Synchronization

/// An `EventStore` in memory, for fast tests of core logic.
///
/// Records are stored encoded, exactly as a disk backend stores them, so the
/// codec is exercised here too. Writes run on a copy that replaces the state
/// only when the body returns: a throwing body leaves nothing behind. Writes
/// are serialised and reads see a snapshot, from any thread.
package final class MemoryStore: EventStore {
  /// The log and its derived tables, as values.
  package struct State: Sendable {
    package var records: [[UInt8]] = []
    package var heads: [StreamName: StreamHead] = [:]
    package var nodes: [StreamName: [NodeID: TreeNode<Slot>]] = [:]
    package var ids: [ItemID: IdEntry] = [:]
    package var streamEvents: [StreamName: [UInt64]] = [:]
    package var checkpoints: [StreamName: [Checkpoint]] = [:]
    package var summary: RecordedCounts? = nil
    /// Sync's tables (`MemoryStore+Sync`).
    package var sync = SyncTables()
    /// Named tokens by id (`MemoryStore+Tokens`).
    package var tokens: [String: NamedToken] = [:]
    package var replicaOwners: [ItemID: String] = [:]
  }

  private let committed = Mutex(State())
  /// Held for a whole write, so that writers run one at a time.
  private let writer = Mutex(())
  /// What the last write read, for tests of what a command costs.
  private let lastWriteReads = Mutex(Reads())

  /// Rows read by one transaction: what a command costs, whatever the store.
  package struct Reads: Equatable, Sendable {
    package var records = 0
    package var nodes = 0
    package var ids = 0
  }

  package init() {}

  package var kind: MsglogError.Store { .memory }
  /// The in-memory twin of an LMDB log: it may be a replica too.
  package var keepsReplicas: Bool { true }

  /// A log in memory is there, empty, from the start.
  package func initialize() throws -> LogInitialization { .ready }

  var state: State { committed.withLock { $0 } }

  /// The rows the last write transaction read (records, order-tree nodes, id rows).
  package var readsOfLastWrite: Reads { lastWriteReads.withLock { $0 } }

  package func read<R>(_ body: (any LogReader) throws -> R) throws -> R {
    try body(Transaction(state: state))
  }

  package func write<R>(reserving bytes: Int, touching streams: [StreamName], _ body: (any LogWriter) throws -> R)
    throws -> R
  {
    try writer.withLock { _ in
      let txn = Transaction(state: state)
      defer { lastWriteReads.withLock { $0 = txn.reads } }
      let result = try body(txn)
      committed.withLock { $0 = txn.state }
      return result
    }
  }

  /// Flips one bit of a stored record, for corruption tests.
  package func corruptRecord(at seq: UInt64, byte: Int) {
    committed.withLock { $0.records[Int(seq - 1)][byte] ^= 0x01 }
  }

  /// Changes what is stored behind the log's back, for damage tests.
  package func damage(_ change: (inout State) -> Void) {
    committed.withLock { change(&$0) }
  }

  final class Transaction: LogWriter {
    var state: State
    var reads = Reads()

    init(state: State) { self.state = state }

    func headSeq() throws -> UInt64 { UInt64(state.records.count) }

    func forEachRecord(from seq: UInt64, _ body: (UInt64, UnsafeRawBufferPointer) throws -> Bool) throws {
      var seq = max(seq, 1)
      while seq <= UInt64(state.records.count) {
        reads.records += 1
        let more = try state.records[Int(seq - 1)].withUnsafeBytes { try body(seq, $0) }
        if !more { return }
        seq += 1
      }
    }

    func withRecord<R>(at seq: UInt64, _ body: (UnsafeRawBufferPointer) throws -> R) throws -> R? {
      guard seq >= 1, seq <= UInt64(state.records.count) else { return nil }
      reads.records += 1
      return try state.records[Int(seq - 1)].withUnsafeBytes(body)
    }

    func streamHead(_ stream: StreamName) throws -> StreamHead? { state.heads[stream] }

    func streamHeads() throws -> [StreamHead] {
      state.heads.values.sorted { $0.stream < $1.stream }
    }

    func orderNode(_ id: NodeID, of stream: StreamName) throws -> TreeNode<Slot>? {
      reads.nodes += 1
      return state.nodes[stream]?[id]
    }

    func idEntry(_ id: ItemID) throws -> IdEntry? {
      reads.ids += 1
      return state.ids[id]
    }

    func forEachIdEntry(from start: [UInt8], _ body: (ItemID, IdEntry) throws -> Bool) throws {
      for id in state.ids.keys.sorted(by: { $0.bytes.lexicographicallyPrecedes($1.bytes) })
      where !id.bytes.lexicographicallyPrecedes(start) {
        reads.ids += 1
        guard try body(id, state.ids[id]!) else { return }
      }
    }

    func forEachStreamEvent(of stream: StreamName, from seq: UInt64, _ body: (UInt64) throws -> Bool) throws {
      for s in state.streamEvents[stream] ?? [] where s >= seq {
        guard try body(s) else { return }
      }
    }

    func checkpoint(of stream: StreamName, atOrBefore seq: UInt64) throws -> Checkpoint? {
      state.checkpoints[stream]?.last { $0.seq <= seq }
    }

    func checkpointSeqs(of stream: StreamName) throws -> [UInt64] {
      state.checkpoints[stream]?.map(\.seq) ?? []
    }

    func lastStreamEvent(of stream: StreamName) throws -> UInt64? { state.streamEvents[stream]?.last }

    func forEachStreamRecord(
      of stream: StreamName, downFrom seq: UInt64, _ body: (UInt64, UnsafeRawBufferPointer) throws -> Bool
    ) throws {
      for s in (state.streamEvents[stream] ?? []).reversed() where s <= seq {
        guard let record = try withRecord(at: s, { try body(s, $0) }) else {
          throw DerivedDamage(table: "stream-events", "the index names seq \(s), which is not in the log")
        }
        guard record else { return }
      }
    }

    func summary() throws -> RecordedCounts? { state.summary }

    func tableCounts() throws -> TableCounts? {
      TableCounts(
        events: UInt64(state.records.count),
        streamEvents: UInt64(state.streamEvents.values.reduce(0) { $0 + $1.count }),
        heads: UInt64(state.heads.count), ids: UInt64(state.ids.count),
        nodes: UInt64(state.nodes.values.reduce(0) { $0 + $1.count }),
        checkpoints: UInt64(state.checkpoints.values.reduce(0) { $0 + $1.count }))
    }

    func putSummary(_ summary: RecordedCounts) throws { state.summary = summary }

    func appendRecord(_ record: [UInt8], of event: Event) throws {
      precondition(event.seq == UInt64(state.records.count) + 1, "records are appended in seq order")
      state.records.append(record)
    }

    func replaceRecord(_ record: [UInt8], of event: Event) throws {
      state.records[Int(event.seq - 1)] = record
    }

    func putStreamHead(_ head: StreamHead) throws { state.heads[head.stream] = head }

    func putOrderNode(_ node: TreeNode<Slot>, id: NodeID, of stream: StreamName) throws {
      state.nodes[stream, default: [:]][id] = node
    }

    func deleteOrderNode(_ id: NodeID, of stream: StreamName) throws {
      state.nodes[stream]?[id] = nil
      if state.nodes[stream]?.isEmpty == true { state.nodes[stream] = nil }
    }

    func putIdEntry(_ entry: IdEntry, for id: ItemID) throws { state.ids[id] = entry }

    func putStreamEvent(_ seq: UInt64, of stream: StreamName) throws {
      if state.streamEvents[stream]?.last != seq { state.streamEvents[stream, default: []].append(seq) }
    }

    func putCheckpoint(_ checkpoint: Checkpoint) throws {
      state.checkpoints[checkpoint.stream, default: []].removeAll { $0.seq == checkpoint.seq }
      state.checkpoints[checkpoint.stream, default: []].append(checkpoint)
      state.checkpoints[checkpoint.stream]!.sort { $0.seq < $1.seq }
    }

    func clearDerived() throws {
      state.heads.removeAll()
      state.nodes.removeAll()
      state.ids.removeAll()
      state.streamEvents.removeAll()
      state.checkpoints.removeAll()
      state.summary = nil
      state.sync.savedView = nil
    }
  }
}
