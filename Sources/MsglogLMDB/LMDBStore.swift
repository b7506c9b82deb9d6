import CLMDB
import FoundationEssentials
import MsglogCore

#if canImport(Glibc)
  import Glibc
#endif

/// The event log in one LMDB environment.
///
/// Named databases (see docs/FORMAT.md):
/// - `events`:        big-endian u64 seq → event record (`EventRecord`), the log itself;
/// - `heads`:         stream name → its counters and order-tree bookkeeping;
/// - `order`:         stream name, 0, node id → a node of the stream's order tree;
/// - `ids`:           item id (16 bytes) → insert seq, remove seq, leaf;
/// - `stream-events`: stream name, 0, seq → nothing (each stream's events);
/// - `checkpoints`:   stream name, 0, seq → the stream's slots at that seq;
/// - `meta`:          `format` → `msglog/1`.
/// Everything but `events` is derived data, updated in the same transaction.
public final class LMDBStore: EventStore {
  static let formatKey = Array("format".utf8)
  static let formatValue = Array("msglog/1".utf8)
  /// A new database starts with a small map; it doubles whenever a write fills it.
  public static let initialMapSize = 1 << 20

  let environment: Environment
  let events: Database
  let heads: Database
  let order: Database
  let ids: Database
  let streamEvents: Database
  let checkpoints: Database

  public var path: String { environment.path }
  public var mapSize: Int { environment.mapSize }

  /// Opens the database at `path`.
  ///
  /// - Parameter create: whether a missing database may be created (a write
  ///   that is about to succeed); readers never create anything.
  public init(path: String, create: Bool) throws {
    try LMDBStore.checkDirectory(path, create: create)
    let env: Environment
    do {
      env = try Environment(path: path, readOnly: !create, maxDatabases: 8, mapSize: LMDBStore.initialMapSize)
    } catch let error as LMDBError where error.code == LMDBError.invalid || error.code == LMDBError.versionMismatch {
      throw MsglogError.refused("\(path) is not a msglog database (\(error))")
    }
    func open(_ txn: Transaction, _ name: String) throws -> Database {
      guard let db = try env.openDatabase(name, create: create, in: txn) else {
        throw MsglogError.refused("\(path) is not a msglog database (it has no '\(name)' table)")
      }
      return db
    }
    // Handles opened in a transaction stay valid after it commits; a reader
    // opens them in a read transaction, which keeps them too.
    let setup: (Transaction) throws -> [Database] = { txn in
      let meta = try open(txn, "meta")
      let format = try txn.get(meta, LMDBStore.formatKey) { Array($0) }
      if format == nil, create {
        try txn.put(meta, LMDBStore.formatKey, LMDBStore.formatValue)
      } else if format != LMDBStore.formatValue {
        let found = format.map { String(decoding: $0, as: UTF8.self) } ?? "none"
        throw MsglogError.refused("\(path) is not a msglog database (format: \(found))")
      }
      return try ["events", "heads", "order", "ids", "stream-events", "checkpoints"].map { try open(txn, $0) }
    }
    let dbs = create ? try env.write(setup) : try env.read(setup)
    self.environment = env
    (events, heads, order, ids, streamEvents, checkpoints) = (dbs[0], dbs[1], dbs[2], dbs[3], dbs[4], dbs[5])
  }

  /// Refuses paths that cannot hold a database before LMDB creates lock files in them.
  static func checkDirectory(_ path: String, create: Bool) throws {
    let fm = FileManager.default
    let kind = PathKind.of(path)
    if kind == .missing {
      guard create else {
        throw MsglogError.refused(
          "no database at \(path)",
          hint: "a first 'msglog append TEXT' creates it; choose another with --db PATH or MSGLOG_DB")
      }
      // Owner-only: a conversation log is private.
      if mkdir(path, 0o700) != 0 {
        throw MsglogError.refused("cannot create the database directory \(path): \(String(cString: strerror(errno)))")
      }
      return
    }
    guard kind == .directory else {
      throw MsglogError.refused("\(path) is not a msglog database (it is a file, not a directory)")
    }
    if PathKind.of(path + "/data.mdb") != .missing { return }
    let contents = (try? fm.contentsOfDirectory(atPath: path)) ?? []
    guard create else {
      throw MsglogError.refused(
        contents.isEmpty ? "no database at \(path) (the directory is empty)" : "\(path) is not a msglog database",
        hint: "a first 'msglog append TEXT' creates one")
    }
    guard contents.isEmpty else {
      throw MsglogError.refused("\(path) is not a msglog database (the directory holds other files)")
    }
  }

  public func read<R>(_ body: (any LogReader) throws -> R) throws -> R {
    try environment.read { txn in
      let access = Access(store: self, txn: txn)
      return try body(access)
    }
  }

  public func write<R>(reserving bytes: Int, _ body: (any LogWriter) throws -> R) throws -> R {
    try environment.write(reserving: bytes) { txn in
      let access = Access(store: self, txn: txn)
      return try body(access)
    }
  }

  /// `LogReader`/`LogWriter` over one transaction.
  final class Access: LogWriter {
    let store: LMDBStore
    let txn: Transaction

    init(store: LMDBStore, txn: Transaction) {
      self.store = store
      self.txn = txn
    }

    func headSeq() throws -> UInt64 {
      try txn.withCursor(store.events) { cursor in
        guard let last = try cursor.last() else { return 0 }
        return Key.seq(last.key)
      }
    }

    func forEachRecord(from seq: UInt64, _ body: (UInt64, UnsafeRawBufferPointer) throws -> Bool) throws {
      try txn.withCursor(store.events) { cursor in
        var entry = try cursor.seek(Key.seq(seq))
        while let (key, value) = entry {
          guard try body(Key.seq(key), value) else { return }
          entry = try cursor.next()
        }
      }
    }

    func withRecord<R>(at seq: UInt64, _ body: (UnsafeRawBufferPointer) throws -> R) throws -> R? {
      try txn.get(store.events, Key.seq(seq), body)
    }

    func streamHead(_ stream: StreamName) throws -> StreamHead? {
      try txn.get(store.heads, stream.bytes) { Row.head(stream: stream, $0) }
    }

    func streamHeads() throws -> [StreamHead] {
      try txn.withCursor(store.heads) { cursor in
        var heads: [StreamHead] = []
        var entry = try cursor.first()
        while let (key, value) = entry {
          heads.append(Row.head(stream: StreamName(String(decoding: key, as: UTF8.self)), value))
          entry = try cursor.next()
        }
        return heads
      }
    }

    func orderNode(_ id: NodeID, of stream: StreamName) throws -> TreeNode<Slot>? {
      try txn.get(store.order, Key.streamKey(stream, id)) { Row.node($0) }
    }

    func idEntry(_ id: ItemID) throws -> IdEntry? {
      try txn.get(store.ids, id.bytes) { Row.idEntry($0) }
    }

    func forEachIdEntry(from start: [UInt8], _ body: (ItemID, IdEntry) throws -> Bool) throws {
      try txn.withCursor(store.ids) { cursor in
        var entry = start.isEmpty ? try cursor.first() : try cursor.seek(start)
        while let (key, value) = entry {
          guard try body(ItemID(bytes: key), Row.idEntry(value)) else { return }
          entry = try cursor.next()
        }
      }
    }

    func forEachStreamEvent(of stream: StreamName, from seq: UInt64, _ body: (UInt64) throws -> Bool) throws {
      let prefix = Key.streamPrefix(stream)
      try txn.withCursor(store.streamEvents) { cursor in
        var entry = try cursor.seek(Key.streamKey(stream, seq))
        while let (key, _) = entry, Key.hasPrefix(key, prefix) {
          guard try body(Key.suffix(key)) else { return }
          entry = try cursor.next()
        }
      }
    }

    func checkpoint(of stream: StreamName, atOrBefore seq: UInt64) throws -> Checkpoint? {
      let prefix = Key.streamPrefix(stream)
      return try txn.withCursor(store.checkpoints) { cursor in
        // The first key after (stream, seq), then one step back.
        let after = seq == UInt64.max ? nil : try cursor.seek(Key.streamKey(stream, seq + 1))
        let entry = after == nil ? try cursor.last() : try cursor.previous()
        guard let (key, value) = entry, Key.hasPrefix(key, prefix) else { return nil }
        return Row.checkpoint(stream: stream, seq: Key.suffix(key), value)
      }
    }

    func checkpointSeqs(of stream: StreamName) throws -> [UInt64] {
      let prefix = Key.streamPrefix(stream)
      return try txn.withCursor(store.checkpoints) { cursor in
        var seqs: [UInt64] = []
        var entry = try cursor.seek(prefix)
        while let (key, _) = entry, Key.hasPrefix(key, prefix) {
          seqs.append(Key.suffix(key))
          entry = try cursor.next()
        }
        return seqs
      }
    }

    func appendRecord(_ bytes: [UInt8], seq: UInt64) throws {
      // MDB_APPEND: the key is past every other, so LMDB skips the search
      // and fills pages completely; it refuses a key out of order.
      try txn.put(store.events, Key.seq(seq), bytes, flags: UInt32(MDB_APPEND))
    }

    func putStreamHead(_ head: StreamHead) throws {
      try txn.put(store.heads, head.stream.bytes, Row.encode(head))
    }

    func putOrderNode(_ node: TreeNode<Slot>, id: NodeID, of stream: StreamName) throws {
      try txn.put(store.order, Key.streamKey(stream, id), Row.encode(node))
    }

    func deleteOrderNode(_ id: NodeID, of stream: StreamName) throws {
      try txn.delete(store.order, Key.streamKey(stream, id))
    }

    func putStreamEvent(_ seq: UInt64, of stream: StreamName) throws {
      try txn.put(store.streamEvents, Key.streamKey(stream, seq), [])
    }

    func putCheckpoint(_ checkpoint: Checkpoint) throws {
      try txn.put(store.checkpoints, Key.streamKey(checkpoint.stream, checkpoint.seq), Row.encode(checkpoint))
    }

    func putIdEntry(_ entry: IdEntry, for id: ItemID) throws {
      try txn.put(store.ids, id.bytes, Row.encode(entry))
    }

    func clearDerived() throws {
      for db in [store.heads, store.order, store.ids, store.streamEvents, store.checkpoints] { try txn.empty(db) }
    }
  }
}

/// Keys: the `events` table's are the seq as 8 big-endian bytes, so that
/// LMDB's bytewise order is seq order; per-stream tables use the stream
/// name, a 0 byte (names hold no control characters) and 8 big-endian bytes.
enum Key {
  static func seq(_ seq: UInt64) -> [UInt8] {
    withUnsafeBytes(of: seq.bigEndian) { Array($0) }
  }

  static func seq(_ key: UnsafeRawBufferPointer) -> UInt64 {
    precondition(key.count == 8, "events keys are 8 bytes")
    return key.loadUnaligned(as: UInt64.self).bigEndian
  }

  static func streamPrefix(_ stream: StreamName) -> [UInt8] { stream.bytes + [0] }

  static func streamKey(_ stream: StreamName, _ n: UInt64) -> [UInt8] { streamPrefix(stream) + seq(n) }

  static func hasPrefix(_ key: UnsafeRawBufferPointer, _ prefix: [UInt8]) -> Bool {
    key.count == prefix.count + 8 && key.prefix(prefix.count).elementsEqual(prefix)
  }

  /// The number after the prefix.
  static func suffix(_ key: UnsafeRawBufferPointer) -> UInt64 {
    key.loadUnaligned(fromByteOffset: key.count - 8, as: UInt64.self).bigEndian
  }
}

/// Encodings of the derived rows (big-endian integers, raw UUID bytes).
enum Row {
  static func head(stream: StreamName, _ v: UnsafeRawBufferPointer) -> StreamHead {
    StreamHead(
      stream: stream, version: u64(v, 0), lastSeq: u64(v, 8), count: u64(v, 16), root: u64(v, 24),
      nextNode: u64(v, 32), checkpointVersion: u64(v, 40), checkpointCount: u64(v, 48))
  }

  static func encode(_ head: StreamHead) -> [UInt8] {
    var out: [UInt8] = []
    out.reserveCapacity(56)
    for n in [
      head.version, head.lastSeq, head.count, head.root, head.nextNode, head.checkpointVersion, head.checkpointCount,
    ] {
      append(n, to: &out)
    }
    return out
  }

  /// u8 is-leaf, u64 parent, u32 n, then n × (16-byte id, u64 seq) in a leaf
  /// or n × (u64 child, u64 count) in an inner node.
  static func node(_ v: UnsafeRawBufferPointer) -> TreeNode<Slot> {
    let isLeaf = v[0] == 1
    let parent = u64(v, 1)
    let n = Int(v.loadUnaligned(fromByteOffset: 9, as: UInt32.self).bigEndian)
    var node = TreeNode<Slot>(parent: parent, isLeaf: isLeaf)
    if isLeaf {
      node.elements.reserveCapacity(n)
      for i in 0..<n {
        let o = 13 + i * 24
        node.elements.append(
          Slot(id: ItemID(bytes: UnsafeRawBufferPointer(rebasing: v[o..<(o + 16)])), seq: u64(v, o + 16)))
      }
    } else {
      node.children.reserveCapacity(n)
      node.counts.reserveCapacity(n)
      for i in 0..<n {
        node.children.append(u64(v, 13 + i * 16))
        node.counts.append(Int(u64(v, 21 + i * 16)))
      }
    }
    return node
  }

  static func encode(_ node: TreeNode<Slot>) -> [UInt8] {
    var out: [UInt8] = [node.isLeaf ? 1 : 0]
    out.reserveCapacity(13 + node.width * 24)
    append(node.parent, to: &out)
    withUnsafeBytes(of: UInt32(node.width).bigEndian) { out.append(contentsOf: $0) }
    if node.isLeaf {
      for slot in node.elements { append(slot, to: &out) }
    } else {
      for (child, count) in zip(node.children, node.counts) {
        append(child, to: &out)
        append(UInt64(count), to: &out)
      }
    }
    return out
  }

  /// u64 version, then (16-byte id, u64 seq) per item.
  static func checkpoint(stream: StreamName, seq: UInt64, _ v: UnsafeRawBufferPointer) -> Checkpoint {
    let n = (v.count - 8) / 24
    var slots: [Slot] = []
    slots.reserveCapacity(n)
    for i in 0..<n {
      let o = 8 + i * 24
      slots.append(Slot(id: ItemID(bytes: UnsafeRawBufferPointer(rebasing: v[o..<(o + 16)])), seq: u64(v, o + 16)))
    }
    return Checkpoint(stream: stream, seq: seq, version: u64(v, 0), slots: slots)
  }

  static func encode(_ checkpoint: Checkpoint) -> [UInt8] {
    var out: [UInt8] = []
    out.reserveCapacity(8 + checkpoint.slots.count * 24)
    append(checkpoint.version, to: &out)
    for slot in checkpoint.slots { append(slot, to: &out) }
    return out
  }

  static func idEntry(_ v: UnsafeRawBufferPointer) -> IdEntry {
    IdEntry(insertSeq: u64(v, 0), removeSeq: u64(v, 8), leaf: u64(v, 16))
  }

  static func encode(_ entry: IdEntry) -> [UInt8] {
    var out: [UInt8] = []
    out.reserveCapacity(24)
    append(entry.insertSeq, to: &out)
    append(entry.removeSeq, to: &out)
    append(entry.leaf, to: &out)
    return out
  }

  static func u64(_ v: UnsafeRawBufferPointer, _ offset: Int) -> UInt64 {
    guard v.count >= offset + 8 else { return 0 }
    return v.loadUnaligned(fromByteOffset: offset, as: UInt64.self).bigEndian
  }

  static func append(_ n: UInt64, to out: inout [UInt8]) {
    withUnsafeBytes(of: n.bigEndian) { out.append(contentsOf: $0) }
  }

  static func append(_ slot: Slot, to out: inout [UInt8]) {
    withUnsafeBytes(of: slot.id.uuid) { out.append(contentsOf: $0) }
    append(slot.seq, to: &out)
  }
}
