import CLMDB
import MsglogCore
import Synchronization

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
/// - `meta`:          `format` → `msglog/2`, or `msglog/3` once the log holds a
///                    record of format 2 (edit, restore, undo); `summary` → the
///                    derived tables' row counts.
/// Everything but `events` is derived data, updated in the same transaction.
///
/// `LMDBStore`, the `EventStore` over a path, opens one when there is a
/// database and creates new ones through it.
package final class LMDBTables {
  static let formatKey = Array("format".utf8)
  static let formatValue = Array("msglog/2".utf8)
  /// msglog/1–5, read; msglog/3 once the log holds records of record format
  /// 2 (the events of working together), msglog/4 once it holds records of
  /// format 3 (events with their origin, from replicas) or sync's tables
  /// (`syncTablesVersion`), msglog/5 once one holds a secret, by `ContainerFormat`'s rule.
  static let containerFormat = ContainerFormat(
    storedPrefix: "msglog/", shownPrefix: "msglog/", readable: 1...5,
    holding: [EventRecord.formatVersion2: 3, EventRecord.formatVersion3: 4])
  /// The first version whose containers may hold sync's tables (a remote's
  /// replicas and their outcomes, a replica's own pending changes).
  static let syncTablesVersion = 4
  /// Format 1 had the same events but derived rows without checksums and no
  /// summary; `verify --repair` rebuilds them in format 2.
  static let legacyFormatValue = Array("msglog/1".utf8)
  static let summaryKey = Array("summary".utf8)
  /// The named databases an environment may open: the seven of the log and
  /// sync's five (`LMDBTables+Sync`), with room to spare.
  static let maxDatabases: UInt32 = 16
  /// A new database starts with a small map; it doubles whenever a write fills it.
  package static let initialMapSize = 1 << 20

  let environment: Environment
  let meta: Database
  let events: Database
  let heads: Database
  let order: Database
  let ids: Database
  let streamEvents: Database
  let checkpoints: Database

  /// Sync's tables, once opened (`LMDBTables+Sync`).
  let syncTables = Mutex<[String: Database]>([:])
  /// The log has its id (checked, or given, by a write of this process).
  let hasLogID = Mutex(false)

  /// Whether the derived tables are in this version's format (false: an
  /// older msglog wrote them; `verify --repair` rebuilds them).
  package var derivedFormatIsCurrent: Bool { formatIsCurrent.withLock { $0 } }
  private let formatIsCurrent: Mutex<Bool>

  package var path: String { environment.path }
  package var mapSize: Int { environment.mapSize }

  /// Opens the database at `path`.
  ///
  /// - Parameters:
  ///   - create: whether a missing database may be created (a write that is
  ///     about to succeed); readers never create anything.
  ///   - shown: the path to name in messages (a new database is built under
  ///     a private name beside the one the user gave).
  ///   - lockless: read without the lock file (a copy nobody else can see yet).
  ///
  /// A writer opens the environment and, in its first write transaction,
  /// refuses one that is not msglog's: it has other named databases but no
  /// msglog `meta`. Nothing is written into another program's LMDB.
  /// A reader that cannot take a reader slot — the lock file belongs to
  /// someone else, or the file system is read-only — reads without one and
  /// checks that no commit happened meanwhile (`read`).
  package init(
    path: String, create: Bool, shown: String? = nil, lockless: Bool = false,
    assertionHandler: Environment.AssertionHandler? = nil
  ) throws {
    let shown = shown ?? path
    switch try DatabaseFiles.probe(path, shown: shown) {
    case .missing:
      guard create else { throw MsglogError.noDatabase(location: shown, store: .lmdb, emptyDirectory: false) }
      // Owner-only: a conversation log is private.
      if mkdir(path, 0o700) != 0 {
        throw MsglogError.cannotCreate(location: shown, reason: systemMessage(errno))
      }
    case .emptyDirectory:
      guard create else { throw MsglogError.noDatabase(location: shown, store: .lmdb, emptyDirectory: true) }
    case .database:
      break
    }
    let env =
      lockless
      ? try Environment(
        path: path, readOnly: true, lockless: true, maxDatabases: LMDBTables.maxDatabases,
        mapSize: LMDBTables.initialMapSize)
      : try LMDBTables.openEnvironment(path, writer: create, shown: shown, assertionHandler: assertionHandler)
    func open(_ txn: Transaction, _ name: String, create: Bool) throws -> Database {
      guard let db = try env.openDatabase(name, create: create, in: txn) else {
        throw MsglogError.notAMsglogDatabase(location: shown, reason: "it has no '\(name)' table")
      }
      return db
    }
    // Handles opened in a transaction stay valid after it commits; a reader
    // opens them in a read transaction, which keeps them too.
    let setup: (Transaction) throws -> ([Database], Bool) = { txn in
      var isNew = false
      if create, try env.openDatabase("meta", create: false, in: txn) == nil {
        // Only a brand-new environment (no named databases yet) becomes msglog's.
        guard try txn.entries(try env.mainDatabase(in: txn)) == 0 else {
          throw MsglogError.anotherProgramsDatabase(location: shown)
        }
        isNew = true
      }
      let meta = try open(txn, "meta", create: isNew)
      let format = try txn.get(meta, LMDBTables.formatKey) { Array($0) }
      if isNew {
        try txn.put(meta, LMDBTables.formatKey, LMDBTables.formatValue)
        try txn.put(meta, SyncRows.logKey, SyncRows.encodeLogID(.random()))
      } else if try LMDBTables.containerFormat.version(
        of: format.map { String(decoding: $0, as: UTF8.self) }, location: shown) == nil
      {
        let found = format.map { String(decoding: $0, as: UTF8.self) } ?? "none"
        throw MsglogError.notAMsglogDatabase(location: shown, reason: "format: \(TerminalText.quoted(found))")
      }
      let tables = try ["meta", "events", "heads", "order", "ids", "stream-events", "checkpoints"].map {
        try open(txn, $0, create: isNew)
      }
      return (tables, isNew || format != LMDBTables.legacyFormatValue)
    }
    let (dbs, current) = create ? try env.write(setup) : try env.read(setup)
    self.environment = env
    self.shown = shown
    self.formatIsCurrent = Mutex(current)
    (meta, events, heads, order, ids, streamEvents, checkpoints) = (
      dbs[0], dbs[1], dbs[2], dbs[3], dbs[4], dbs[5], dbs[6]
    )
  }

  /// Opens the environment; a reader falls back to reading without the lock
  /// file when it may not use it, and a writer that may not write says so.
  static func openEnvironment(
    _ path: String, writer: Bool, shown: String, assertionHandler: Environment.AssertionHandler?
  ) throws -> Environment {
    do {
      return try Environment(
        path: path, readOnly: !writer, maxDatabases: maxDatabases, mapSize: initialMapSize,
        mode: DatabaseFiles.fileMode(in: path), assertionHandler: assertionHandler)
    } catch let error as LMDBError where [EACCES, EPERM, EROFS].contains(error.code) {
      if writer { throw MsglogError.readOnly(location: shown, store: .lmdb, reason: systemMessage(error.code)) }
      do {
        return try Environment(
          path: path, readOnly: true, lockless: true, maxDatabases: maxDatabases, mapSize: initialMapSize,
          assertionHandler: assertionHandler)
      } catch let error as LMDBError {
        throw MsglogError.cannotRead(location: shown, reason: "\(error.failure)")
      }
    } catch let error as LMDBError {
      throw MsglogError.cannotRead(location: shown, reason: "\(error.failure)")
    }
  }

  /// The path as the user gave it, for messages.
  package let shown: String

  /// Whether reads go without a reader slot (the database is read-only to us).
  package var isLockless: Bool { environment.isLockless }

  /// Runs `body` in a read transaction.
  ///
  /// Without a reader slot (`isLockless`) nothing stops a writer elsewhere
  /// from reusing the pages being read, so a commit during the read makes
  /// it throw `ConcurrentCommit` rather than return what it saw; the caller
  /// may run it again.
  package func read<R>(_ body: (any LogReader) throws -> R) throws -> R {
    let before = isLockless ? environment.lastCommittedTransaction : 0
    let result: R
    do {
      result = try environment.read { txn in
        let access = LogTransaction(tables: self, txn: txn)
        return try body(access)
      }
    } catch {
      // A page reused under a lockless read looks like damage.
      if isLockless, environment.lastCommittedTransaction != before { throw ConcurrentCommit() }
      throw error
    }
    if isLockless, environment.lastCommittedTransaction != before { throw ConcurrentCommit() }
    return result
  }

  /// The id of the last committed write transaction (see `read`).
  package var lastCommit: Int { environment.lastCommittedTransaction }

  /// A write transaction; `inPieces` (a new database in its staging
  /// directory, which nobody else sees) lets a bulk load commit as it goes
  /// (`LogTransaction.loading`).
  package func write<R>(reserving bytes: Int, inPieces: Bool = false, _ body: (any LogWriter) throws -> R) throws -> R {
    var rebuilt = false
    var opened: [String: Database] = [:]
    let result = try environment.write(reserving: bytes) { txn in
      let access = LogTransaction(tables: self, txn: txn, inPieces: inPieces)
      let result = try body(access)
      try access.giveLogAnID()
      rebuilt = access.rebuiltInFormat
      opened = access.openedTables
      return result
    }
    if rebuilt { formatIsCurrent.withLock { $0 = true } }
    adopt(opened)
    return result
  }

  /// `LogReader`/`LogWriter` over one transaction.
  final class LogTransaction: LogWriter {
    let tables: LMDBTables
    let txn: Transaction
    /// A rebuild in this transaction wrote the derived tables in the current format.
    var rebuiltInFormat = false
    /// Sync's tables this transaction opened (valid for others once it commits).
    var openedTables: [String: Database] = [:]

    /// Whether a bulk load may commit a piece when it has put `pieceBytes` (see `write`).
    let inPieces: Bool
    /// What the bulk load put since the last piece, and through how many cursors now open.
    var bytesInPiece = 0
    var loadingCursors = 0

    init(tables: LMDBTables, txn: Transaction, inPieces: Bool = false) {
      self.tables = tables
      self.txn = txn
      self.inPieces = inPieces
    }

    func headSeq() throws -> UInt64 {
      try txn.withCursor(tables.events) { cursor in
        guard let last = try cursor.last() else { return 0 }
        return try Key.seq(last.key)
      }
    }

    /// Records are read in place from the memory map, which stays put for
    /// the transaction: its reader slot keeps writers from reusing the
    /// pages. A read without a slot (`isLockless`) has no such promise.
    var recordsStayMapped: Bool { !tables.isLockless }

    func forEachRecord(from seq: UInt64, _ body: (UInt64, UnsafeRawBufferPointer) throws -> Bool) throws {
      try txn.withCursor(tables.events) { cursor in
        var entry = try cursor.seek(Key.seq(seq))
        while let (key, value) = entry {
          guard try body(try Key.seq(key), value) else { return }
          entry = try cursor.next()
        }
      }
    }

    func withRecord<R>(at seq: UInt64, _ body: (UnsafeRawBufferPointer) throws -> R) throws -> R? {
      try txn.get(tables.events, Key.seq(seq), body)
    }

    /// One cursor for the whole batch, in seq order: consecutive seqs are a
    /// step to the next entry, not a search from the root.
    func forEachRecord(at seqs: [UInt64], _ body: (UInt64, UnsafeRawBufferPointer) throws -> Void) throws {
      try txn.withCursor(tables.events) { cursor in
        var last: UInt64? = nil
        for seq in seqs.sorted() where seq != last {
          let entry = last.map { $0 + 1 == seq } == true ? try cursor.next() : try cursor.seek(Key.seq(seq))
          guard let (key, value) = entry, try Key.seq(key) == seq else {
            last = nil  // a gap: the next one seeks
            continue
          }
          last = seq
          try body(seq, value)
        }
      }
    }

    func streamHead(_ stream: StreamName) throws -> StreamHead? {
      try txn.get(tables.heads, DerivedRows.headKey(stream)) { try DerivedRows.decodeHead(stream: stream, $0) }
    }

    func streamHeads() throws -> [StreamHead] {
      try txn.withCursor(tables.heads) { cursor in
        var heads: [StreamHead] = []
        var entry = try cursor.first()
        while let (key, value) = entry {
          heads.append(try DerivedRows.decodeHead(stream: try Key.streamName(key, table: .heads), value))
          entry = try cursor.next()
        }
        return heads
      }
    }

    func orderNode(_ id: NodeID, of stream: StreamName) throws -> TreeNode<Slot>? {
      try txn.get(tables.order, DerivedRows.nodeKey(stream, id)) { try DerivedRows.decodeNode(id, of: stream, $0) }
    }

    func idEntry(_ id: ItemID) throws -> IdEntry? {
      try txn.get(tables.ids, id.bytes) { try DerivedRows.decodeIdEntry(id, $0) }
    }

    func forEachIdEntry(from start: [UInt8], _ body: (ItemID, IdEntry) throws -> Bool) throws {
      try txn.withCursor(tables.ids) { cursor in
        var entry = start.isEmpty ? try cursor.first() : try cursor.seek(start)
        while let (key, value) = entry {
          guard key.count == 16 else { throw DerivedDamage(.ids, "a key of \(key.count) bytes is not an id") }
          let id = ItemID(bytes: key)
          guard try body(id, try DerivedRows.decodeIdEntry(id, value)) else { return }
          entry = try cursor.next()
        }
      }
    }

    func forEachStreamEvent(of stream: StreamName, from seq: UInt64, _ body: (UInt64) throws -> Bool) throws {
      let prefix = Key.streamPrefix(stream)
      try txn.withCursor(tables.streamEvents) { cursor in
        var entry = try cursor.seek(DerivedRows.streamKey(stream, seq))
        while let (key, value) = entry, Key.hasPrefix(key, prefix) {
          guard value.isEmpty else {
            throw DerivedDamage(
              table: "stream-events",
              "the row of stream \(TerminalText.quoted(stream)) at seq \(Key.suffix(key)) is not empty")
          }
          guard try body(Key.suffix(key)) else { return }
          entry = try cursor.next()
        }
      }
    }

    func lastStreamEvent(of stream: StreamName) throws -> UInt64? {
      let prefix = Key.streamPrefix(stream)
      return try txn.withCursor(tables.streamEvents) { cursor in
        // The first key after every key of the stream, then one step back.
        let after = try cursor.seek(DerivedRows.streamKey(stream, UInt64.max))
        if let (key, _) = after, Key.hasPrefix(key, prefix) { return Key.suffix(key) }
        guard let (key, _) = after == nil ? try cursor.last() : try cursor.previous(), Key.hasPrefix(key, prefix)
        else { return nil }
        return Key.suffix(key)
      }
    }

    /// The stream's event index walked backwards from `seq`, each record
    /// read from `events` by its key.
    func forEachStreamRecord(
      of stream: StreamName, downFrom seq: UInt64, _ body: (UInt64, UnsafeRawBufferPointer) throws -> Bool
    ) throws {
      let prefix = Key.streamPrefix(stream)
      try txn.withCursor(tables.streamEvents) { cursor in
        // The first key after (stream, seq), then backwards.
        let after = seq == UInt64.max ? nil : try cursor.seek(DerivedRows.streamKey(stream, seq + 1))
        var entry = after == nil ? try cursor.last() : try cursor.previous()
        while let (key, _) = entry, Key.hasPrefix(key, prefix) {
          let eventSeq = Key.suffix(key)
          let found = try txn.get(tables.events, Key.seq(eventSeq)) { try body(eventSeq, $0) }
          guard let found else {
            throw DerivedDamage(
              table: "stream-events",
              "the index of stream \(TerminalText.quoted(stream)) names seq \(eventSeq), which is not in the log")
          }
          guard found else { return }
          entry = try cursor.previous()
        }
      }
    }

    func checkpoint(of stream: StreamName, atOrBefore seq: UInt64) throws -> Checkpoint? {
      let prefix = Key.streamPrefix(stream)
      return try txn.withCursor(tables.checkpoints) { cursor in
        // The first key after (stream, seq), then one step back.
        let after = seq == UInt64.max ? nil : try cursor.seek(DerivedRows.checkpointKey(stream, seq + 1))
        let entry = after == nil ? try cursor.last() : try cursor.previous()
        guard let (key, value) = entry, Key.hasPrefix(key, prefix) else { return nil }
        return try DerivedRows.decodeCheckpoint(stream: stream, seq: Key.suffix(key), value)
      }
    }

    func checkpointSeqs(of stream: StreamName) throws -> [UInt64] {
      let prefix = Key.streamPrefix(stream)
      return try txn.withCursor(tables.checkpoints) { cursor in
        var seqs: [UInt64] = []
        var entry = try cursor.seek(prefix)
        while let (key, _) = entry, Key.hasPrefix(key, prefix) {
          seqs.append(Key.suffix(key))
          entry = try cursor.next()
        }
        return seqs
      }
    }

    func summary() throws -> RecordedCounts? {
      try txn.get(tables.meta, LMDBTables.summaryKey) { try DerivedRows.decodeSummary($0) }
    }

    func tableCounts() throws -> TableCounts? {
      guard tables.derivedFormatIsCurrent || rebuiltInFormat else { throw MsglogError.outdatedFormat("msglog/1") }
      return TableCounts(
        events: try txn.entries(tables.events), streamEvents: try txn.entries(tables.streamEvents),
        heads: try txn.entries(tables.heads), ids: try txn.entries(tables.ids), nodes: try txn.entries(tables.order),
        checkpoints: try txn.entries(tables.checkpoints))
    }

    func appendRecord(_ record: [UInt8], of event: Event) throws {
      // MDB_APPEND: the key is past every other, so LMDB skips the search
      // and fills pages completely; it refuses a key out of order.
      try txn.put(tables.events, Key.seq(event.seq), record, flags: UInt32(MDB_APPEND))
      if let needed = record.first.flatMap(LMDBTables.containerFormat.firstVersion(holding:)) {
        try moveContainer(atLeastTo: needed)
      }
    }

    /// The container's version as this transaction last read or wrote it.
    var containerVersion: Int?

    /// Moves `meta`'s format on to `version` unless it says that or a newer
    /// one already: read once per transaction, written once.
    func moveContainer(atLeastTo version: Int) throws {
      if containerVersion == nil {
        let value = try txn.get(tables.meta, LMDBTables.formatKey) { String(decoding: $0, as: UTF8.self) }
        containerVersion = try LMDBTables.containerFormat.version(of: value, location: tables.shown) ?? 0
      }
      guard let known = containerVersion, known < version else { return }
      try txn.put(tables.meta, LMDBTables.formatKey, Array(LMDBTables.containerFormat.stored(version).utf8))
      containerVersion = version
    }

    func putStreamHead(_ head: StreamHead) throws {
      try txn.put(tables.heads, DerivedRows.headKey(head.stream), DerivedRows.encode(head))
    }

    func putOrderNode(_ node: TreeNode<Slot>, id: NodeID, of stream: StreamName) throws {
      try txn.put(tables.order, DerivedRows.nodeKey(stream, id), DerivedRows.encode(node, id: id, of: stream))
    }

    func deleteOrderNode(_ id: NodeID, of stream: StreamName) throws {
      try txn.delete(tables.order, DerivedRows.nodeKey(stream, id))
    }

    func putStreamEvent(_ seq: UInt64, of stream: StreamName) throws {
      try txn.put(tables.streamEvents, DerivedRows.streamKey(stream, seq), [])
    }

    func putCheckpoint(_ checkpoint: Checkpoint) throws {
      try txn.put(
        tables.checkpoints, DerivedRows.checkpointKey(checkpoint.stream, checkpoint.seq), DerivedRows.encode(checkpoint)
      )
    }

    func putIdEntry(_ entry: IdEntry, for id: ItemID) throws {
      try txn.put(tables.ids, id.bytes, DerivedRows.encode(entry, for: id))
    }

    func putSummary(_ summary: RecordedCounts) throws {
      try txn.put(tables.meta, LMDBTables.summaryKey, DerivedRows.encode(summary))
    }

    func clearDerived() throws {
      for db in [tables.heads, tables.order, tables.ids, tables.streamEvents, tables.checkpoints] { try txn.empty(db) }
      try txn.delete(tables.meta, LMDBTables.summaryKey)
      // What is rebuilt now is in this version's format (format 3 is format
      // 2 with newer records, and stays).
      if try txn.get(tables.meta, LMDBTables.formatKey, { Array($0) }) == LMDBTables.legacyFormatValue {
        try txn.put(tables.meta, LMDBTables.formatKey, LMDBTables.formatValue)
      }
      rebuiltInFormat = true
    }
  }
}

/// Keys: the `events` table's are the seq as 8 big-endian bytes, so that
/// LMDB's bytewise order is seq order; per-stream tables use the stream
/// name, a 0 byte (names hold no control characters) and 8 big-endian bytes
/// (`DerivedRows.streamKey`).
enum Key {
  static func seq(_ seq: UInt64) -> [UInt8] { [UInt8](bigEndian: seq) }

  /// The seq an `events` key holds; any other key there is a damaged log.
  static func seq(_ key: UnsafeRawBufferPointer) throws -> UInt64 {
    guard key.count == 8 else {
      throw MsglogError.corruptedLog("the events table holds a key of \(key.count) bytes, which is not a seq")
    }
    return key.loadBigEndian(as: UInt64.self)
  }

  /// A `heads` key: a stream name, which must be UTF-8.
  static func streamName(_ key: UnsafeRawBufferPointer, table: DerivedRows.Table) throws -> StreamName {
    guard let text = String(validating: key, as: UTF8.self), !key.isEmpty else {
      throw DerivedDamage(table, "a key is not a stream name")
    }
    return StreamName(text)
  }

  static func streamPrefix(_ stream: StreamName) -> [UInt8] { stream.bytes + [0] }

  static func hasPrefix(_ key: UnsafeRawBufferPointer, _ prefix: [UInt8]) -> Bool {
    key.count == prefix.count + 8 && key.prefix(prefix.count).elementsEqual(prefix)
  }

  /// The number after the prefix.
  static func suffix(_ key: UnsafeRawBufferPointer) -> UInt64 {
    key.loadBigEndian(fromByteOffset: key.count - 8, as: UInt64.self)
  }
}
