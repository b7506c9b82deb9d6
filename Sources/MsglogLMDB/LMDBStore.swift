import CLMDB
import Foundation
import MsglogCore

/// The event log in one LMDB environment.
///
/// Named databases (see docs/FORMAT.md):
/// - `events`: big-endian u64 seq → event record (`EventRecord`), the log itself;
/// - `heads`:  stream name → version, last seq, count (3 × u64);
/// - `order`:  stream name → the live item ids in order (16 bytes each);
/// - `ids`:    item id (16 bytes) → insert seq, remove seq (2 × u64);
/// - `meta`:   `format` → `msglog/1`.
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
    let setup: (Transaction) throws -> (Database, Database, Database, Database) = { txn in
      let meta = try open(txn, "meta")
      let format = try txn.get(meta, LMDBStore.formatKey) { Array($0) }
      if format == nil, create {
        try txn.put(meta, LMDBStore.formatKey, LMDBStore.formatValue)
      } else if format != LMDBStore.formatValue {
        let found = format.map { String(decoding: $0, as: UTF8.self) } ?? "none"
        throw MsglogError.refused("\(path) is not a msglog database (format: \(found))")
      }
      return (try open(txn, "events"), try open(txn, "heads"), try open(txn, "order"), try open(txn, "ids"))
    }
    let dbs = create ? try env.write(setup) : try env.read(setup)
    self.environment = env
    (events, heads, order, ids) = dbs
  }

  /// Refuses paths that cannot hold a database before LMDB creates lock files in them.
  static func checkDirectory(_ path: String, create: Bool) throws {
    let fm = FileManager.default
    var isDirectory: ObjCBool = false
    if !fm.fileExists(atPath: path, isDirectory: &isDirectory) {
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
    guard isDirectory.boolValue else {
      throw MsglogError.refused("\(path) is not a msglog database (it is a file, not a directory)")
    }
    if fm.fileExists(atPath: path + "/data.mdb") { return }
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

  public func write<R>(_ body: (any LogWriter) throws -> R) throws -> R {
    try environment.write { txn in
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

    func streamHead(_ stream: String) throws -> StreamHead? {
      try txn.get(store.heads, Array(stream.utf8)) { Row.head(stream: stream, $0) }
    }

    func streamHeads() throws -> [StreamHead] {
      try txn.withCursor(store.heads) { cursor in
        var heads: [StreamHead] = []
        var entry = try cursor.first()
        while let (key, value) = entry {
          heads.append(Row.head(stream: String(decoding: key, as: UTF8.self), value))
          entry = try cursor.next()
        }
        return heads
      }
    }

    func order(of stream: String) throws -> [ItemID] {
      try txn.get(store.order, Array(stream.utf8)) { Row.ids($0) } ?? []
    }

    func idEntry(_ id: ItemID) throws -> IdEntry? {
      try txn.get(store.ids, id.bytes) { Row.idEntry($0) }
    }

    func forEachIdEntry(_ body: (ItemID, IdEntry) throws -> Void) throws {
      try txn.withCursor(store.ids) { cursor in
        var entry = try cursor.first()
        while let (key, value) = entry {
          try body(ItemID(bytes: key), Row.idEntry(value))
          entry = try cursor.next()
        }
      }
    }

    func appendRecord(_ bytes: [UInt8], seq: UInt64) throws {
      // MDB_APPEND: the key is past every other, so LMDB skips the search
      // and fills pages completely; it refuses a key out of order.
      try txn.put(store.events, Key.seq(seq), bytes, flags: UInt32(MDB_APPEND))
    }

    func putStreamHead(_ head: StreamHead) throws {
      try txn.put(store.heads, Array(head.stream.utf8), Row.encode(head))
    }

    func putOrder(_ ids: [ItemID], of stream: String) throws {
      try txn.put(store.order, Array(stream.utf8), Row.encode(ids))
    }

    func putIdEntry(_ entry: IdEntry, for id: ItemID) throws {
      try txn.put(store.ids, id.bytes, Row.encode(entry))
    }

    func clearDerived() throws {
      for db in [store.heads, store.order, store.ids] { try txn.empty(db) }
    }
  }
}

/// Keys of the `events` table: seq as 8 big-endian bytes, so that LMDB's
/// bytewise order is seq order.
enum Key {
  static func seq(_ seq: UInt64) -> [UInt8] {
    withUnsafeBytes(of: seq.bigEndian) { Array($0) }
  }

  static func seq(_ key: UnsafeRawBufferPointer) -> UInt64 {
    precondition(key.count == 8, "events keys are 8 bytes")
    return key.loadUnaligned(as: UInt64.self).bigEndian
  }
}

/// Encodings of the derived rows (big-endian integers, raw UUID bytes).
enum Row {
  static func head(stream: String, _ v: UnsafeRawBufferPointer) -> StreamHead {
    StreamHead(stream: stream, version: u64(v, 0), lastSeq: u64(v, 8), count: u64(v, 16))
  }

  static func encode(_ head: StreamHead) -> [UInt8] {
    var out: [UInt8] = []
    out.reserveCapacity(24)
    for n in [head.version, head.lastSeq, head.count] { append(n, to: &out) }
    return out
  }

  static func ids(_ v: UnsafeRawBufferPointer) -> [ItemID] {
    (0..<(v.count / 16)).map { ItemID(bytes: UnsafeRawBufferPointer(rebasing: v[($0 * 16)..<($0 * 16 + 16)])) }
  }

  static func encode(_ ids: [ItemID]) -> [UInt8] {
    var out: [UInt8] = []
    out.reserveCapacity(ids.count * 16)
    for id in ids { withUnsafeBytes(of: id.uuid) { out.append(contentsOf: $0) } }
    return out
  }

  static func idEntry(_ v: UnsafeRawBufferPointer) -> IdEntry {
    IdEntry(insertSeq: u64(v, 0), removeSeq: u64(v, 8))
  }

  static func encode(_ entry: IdEntry) -> [UInt8] {
    var out: [UInt8] = []
    out.reserveCapacity(16)
    append(entry.insertSeq, to: &out)
    append(entry.removeSeq, to: &out)
    return out
  }

  static func u64(_ v: UnsafeRawBufferPointer, _ offset: Int) -> UInt64 {
    guard v.count >= offset + 8 else { return 0 }
    return v.loadUnaligned(fromByteOffset: offset, as: UInt64.self).bigEndian
  }

  static func append(_ n: UInt64, to out: inout [UInt8]) {
    withUnsafeBytes(of: n.bigEndian) { out.append(contentsOf: $0) }
  }
}
