/// An `EventStore` in memory, for fast tests of core logic and for dry runs
/// (a refused first write must not create a database on disk).
///
/// Records are stored encoded, exactly as a disk backend stores them, so the
/// codec is exercised here too. Writes run on a copy that replaces the state
/// only when the body returns: a throwing body leaves nothing behind.
public final class MemoryStore: EventStore {
  struct State {
    var records: [[UInt8]] = []
    var heads: [String: StreamHead] = [:]
    var orders: [String: [ItemID]] = [:]
    var ids: [ItemID: IdEntry] = [:]
  }

  var state = State()

  public init() {}

  public func read<R>(_ body: (any LogReader) throws -> R) throws -> R {
    try body(Transaction(state: state))
  }

  public func write<R>(_ body: (any LogWriter) throws -> R) throws -> R {
    let txn = Transaction(state: state)
    let result = try body(txn)
    state = txn.state
    return result
  }

  /// Overwrites a stream head, for tests of derived-table damage.
  public func damageHead(_ head: StreamHead) { state.heads[head.stream] = head }

  /// Flips one bit of a stored record, for corruption tests.
  public func corruptRecord(at seq: UInt64, byte: Int) {
    state.records[Int(seq - 1)][byte] ^= 0x01
  }

  final class Transaction: LogWriter {
    var state: State

    init(state: State) { self.state = state }

    func headSeq() throws -> UInt64 { UInt64(state.records.count) }

    func forEachRecord(from seq: UInt64, _ body: (UInt64, UnsafeRawBufferPointer) throws -> Bool) throws {
      var seq = max(seq, 1)
      while seq <= UInt64(state.records.count) {
        let more = try state.records[Int(seq - 1)].withUnsafeBytes { try body(seq, $0) }
        if !more { return }
        seq += 1
      }
    }

    func withRecord<R>(at seq: UInt64, _ body: (UnsafeRawBufferPointer) throws -> R) throws -> R? {
      guard seq >= 1, seq <= UInt64(state.records.count) else { return nil }
      return try state.records[Int(seq - 1)].withUnsafeBytes(body)
    }

    func streamHead(_ stream: String) throws -> StreamHead? { state.heads[stream] }

    func streamHeads() throws -> [StreamHead] {
      state.heads.values.sorted { Array($0.stream.utf8).lexicographicallyPrecedes($1.stream.utf8) }
    }

    func order(of stream: String) throws -> [ItemID] { state.orders[stream] ?? [] }

    func idEntry(_ id: ItemID) throws -> IdEntry? { state.ids[id] }

    func forEachIdEntry(_ body: (ItemID, IdEntry) throws -> Void) throws {
      for (id, entry) in state.ids { try body(id, entry) }
    }

    func appendRecord(_ bytes: [UInt8], seq: UInt64) throws {
      precondition(seq == UInt64(state.records.count) + 1, "records are appended in seq order")
      state.records.append(bytes)
    }

    func putStreamHead(_ head: StreamHead) throws { state.heads[head.stream] = head }

    func putOrder(_ ids: [ItemID], of stream: String) throws { state.orders[stream] = ids }

    func putIdEntry(_ entry: IdEntry, for id: ItemID) throws { state.ids[id] = entry }

    func clearDerived() throws {
      state.heads.removeAll()
      state.orders.removeAll()
      state.ids.removeAll()
    }
  }
}
