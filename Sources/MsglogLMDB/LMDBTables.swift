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
/// - `meta`:          `format` → the container's version (`containerFormat`);
///                    `summary` → the derived tables' row counts;
/// - `purge-marks`:   where `msglog purge` must clear old bytes (`markForPurge`).
/// Everything but `events` is derived data, updated in the same transaction.
///
/// `LMDBStore`, the `EventStore` over a path, opens one when there is a
/// database and creates new ones through it.
package final class LMDBTables {
  static let formatKey = Array("format".utf8)
  /// A new database: its records are framed (record format 4) from the first.
  static let newFormatValue = Array("msglog/6".utf8)
  /// What `verify --repair` makes of a database of format 1 (its derived
  /// rows rebuilt in format 2; its records stay as they are).
  static let repairedFormatValue = Array("msglog/2".utf8)
  /// msglog/1–6, read. A database made before msglog/6 keeps the records
  /// of formats 1 to 3 it was written with, and is written so on: msglog/3
  /// once the log holds records of record format 2 (the events of working
  /// together), msglog/4 once it holds records of format 3 (events with
  /// their origin, from replicas) or sync's tables (`syncTablesVersion`),
  /// msglog/5 once one holds a secret; msglog/6 once it holds a record of
  /// format 4 (pulled from a remote that writes them), by
  /// `ContainerFormat`'s rule. A new database starts at msglog/6 and writes
  /// framed records (`recordLayout`); msglog/7 once it holds a named token
  /// (`tokensVersion`), so that an older msglog serving it refuses it
  /// rather than serve it without asking for a token; msglog/8 once it
  /// holds an erase (record format 5); msglog/9 once trimmed; msglog/10
  /// once it holds an unsign (record format 6) and the unsigned edits it
  /// leaves; msglog/11 once a base row names retired items
  /// (`RetiredItem`), which an older msglog would misread.
  static let containerFormat = ContainerFormat(
    storedPrefix: "msglog/", shownPrefix: "msglog/", readable: 1...11,
    holding: [
      EventRecord.formatVersion2: 3, EventRecord.formatVersion3: 4, EventRecord.formatVersion4: framedVersion,
      EventRecord.formatVersion5: erasedVersion, EventRecord.formatVersion6: unsignedVersion,
    ])
  /// The first version that may hold an unsign (record format 6) and the
  /// edits it unsigned (body flags 4): an older msglog refuses such a log.
  static let unsignedVersion = 10
  /// The first version that may hold an erase (record format 5) and the
  /// erased bodies it leaves: an older msglog refuses such a log.
  static let erasedVersion = 8
  /// The first version whose base rows may name retired items (the items
  /// removed before a trim's horizon, whose ids stay used): an older
  /// msglog refuses such a log rather than misread the rows.
  static let retiringVersion = 11
  /// The first version that may be trimmed (`msglog trim`): records below
  /// its horizon are gone, which an older msglog would take for damage.
  static let trimmedVersion = 9
  /// The first version whose databases write framed records (record format 4).
  static let framedVersion = 6
  /// The first version whose containers may hold sync's tables (a remote's
  /// replicas and their outcomes, a replica's own pending changes).
  static let syncTablesVersion = 4
  /// Format 1 had the same events but derived rows without checksums and no
  /// summary; `verify --repair` rebuilds them in format 2.
  static let legacyFormatValue = Array("msglog/1".utf8)
  static let summaryKey = Array("summary".utf8)
  /// The named databases an environment may open: the seven of the log,
  /// sync's five (`LMDBTables+Sync`), `tokens`, `purge-marks` and purge's
  /// scratch table while it runs: 15, with one to spare.
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

  /// The log has its id (checked, or given, by a write of this process).
  let hasLogID = Mutex(false)
  /// A write of this process said in the purge marks that it reused page
  /// buffers (`noteReusedBuffers`).
  let buffersNoted = Atomic(false)

  /// How this database's new records are written: framed from msglog/6
  /// on, whole before (as the msglog that made it wrote them). Read when
  /// it is opened: a container only ever moves on, and a database that
  /// has moved to msglog/6 meanwhile may still take records of format 1 to 3.
  let recordLayout: EventRecord.Layout

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
  ///   - staging: a new database in its staging directory
  ///     (`LMDBStore.createDatabase`): its commits are not synced
  ///     (`Environment.deferSyncing`).
  ///
  /// A writer opens the environment and, in its first write transaction,
  /// refuses one that is not msglog's: it has other named databases but no
  /// msglog `meta`. Nothing is written into another program's LMDB.
  /// A reader that cannot take a reader slot — the lock file belongs to
  /// someone else, or the file system is read-only — reads without one and
  /// checks that no commit happened meanwhile (`read`).
  package init(
    path: String, create: Bool, shown: String? = nil, lockless: Bool = false, staging: Bool = false,
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
      guard let db = try txn.openTable(name, create: create) else {
        throw MsglogError.notAMsglogDatabase(location: shown, reason: "it has no '\(name)' table")
      }
      return db
    }
    // Handles opened in a transaction stay valid after it commits; a reader
    // opens them in a read transaction, which keeps them too.
    let setup: (Transaction) throws -> ([Database], Bool, Int, Bool) = { txn in
      var isNew = false
      if create, try txn.openTable("meta", create: false) == nil {
        // Only a brand-new environment (no named databases yet) becomes msglog's.
        guard try txn.entries(try env.mainDatabase(in: txn)) == 0 else {
          throw MsglogError.anotherProgramsDatabase(location: shown)
        }
        isNew = true
      }
      let meta = try open(txn, "meta", create: isNew)
      let format = try txn.get(meta, LMDBTables.formatKey) { Array($0) }
      var version = LMDBTables.framedVersion
      if isNew {
        try txn.put(meta, LMDBTables.formatKey, LMDBTables.newFormatValue)
        try txn.put(meta, SyncRows.logKey, SyncRows.encodeLogID(.random()))
        try LMDBTables.startPurgeMarks(in: txn)
      } else if let known = try LMDBTables.containerFormat.version(
        of: format.map { String(decoding: $0, as: UTF8.self) }, location: shown)
      {
        version = known
      } else {
        let found = format.map { String(decoding: $0, as: UTF8.self) } ?? "none"
        throw MsglogError.notAMsglogDatabase(location: shown, reason: "format: \(TerminalText.quoted(found))")
      }
      // msglog 0.1's first databases (format 1) had no `stream-events` or
      // `checkpoints`: a writer makes them empty, for `verify --repair` to
      // fill; a reader cannot, and is told what `list` is told of format 1.
      let legacy = format == LMDBTables.legacyFormatValue
      let tables = try ["meta", "events", "heads", "order", "ids", "stream-events", "checkpoints"].map { name in
        let derivedLater = legacy && (name == "stream-events" || name == "checkpoints")
        if derivedLater, !create, try txn.openTable(name, create: false) == nil {
          throw MsglogError.outdatedFormat("msglog/1")
        }
        return try open(txn, name, create: isNew || (derivedLater && create))
      }
      return (tables, isNew || format != LMDBTables.legacyFormatValue, version, isNew)
    }
    // In a staging directory no commit syncs, not even the tables' making:
    // the database is synced whole before it is put in place.
    if staging { env.deferSyncing() }
    let made = try create ? env.write(setup) : env.read(setup)
    let (dbs, current, version, isNew) = made
    // A new database's first rows (its format, id and purge marks) are no
    // text its page buffers could carry into a later write.
    if isNew { env.forgetWrites() }
    self.environment = env
    self.shown = shown
    self.formatIsCurrent = Mutex(current)
    self.recordLayout = version >= LMDBTables.framedVersion ? .framed : .whole
    (meta, events, heads, order, ids, streamEvents, checkpoints) = (
      dbs[0], dbs[1], dbs[2], dbs[3], dbs[4], dbs[5], dbs[6]
    )
  }

  /// Opens the environment; a reader falls back to reading without the lock
  /// file when it may not use it, and a writer that may not write says so.
  static func openEnvironment(
    _ path: String, writer: Bool, shown: String, assertionHandler: Environment.AssertionHandler?
  ) throws -> Environment {
    // Looked at before the opening, and again after it: made between the
    // two, the file LMDB opened is the one looked at then.
    if let foreign = DatabaseFiles.foreignLockFile(in: path) {
      return try refusing(foreign, writer: writer, path, shown: shown, assertionHandler: assertionHandler)
    }
    do {
      var environment: Environment? = try Environment(
        path: path, readOnly: !writer, maxDatabases: maxDatabases, mapSize: initialMapSize,
        mode: DatabaseFiles.modeForLMDBsFiles(in: path), assertionHandler: assertionHandler)
      if let foreign = DatabaseFiles.foreignLockFile(in: path) {
        environment = nil  // closed first: one opening of a database per process
        return try refusing(foreign, writer: writer, path, shown: shown, assertionHandler: assertionHandler)
      }
      DatabaseFiles.narrowLockFile(in: path)
      return environment!
    } catch let error as LMDBError where [EACCES, EPERM, EROFS].contains(error.code) {
      if writer { throw MsglogError.readOnly(location: shown, store: .lmdb, reason: systemMessage(error.code)) }
      return try withoutLockFile(path, shown: shown, assertionHandler: assertionHandler)
    } catch let held as Environment.OpeningLockHeld {
      // A reader reads without it, as where it may not use the lock file.
      if !writer, let environment = try? withoutLockFile(path, shown: shown, assertionHandler: assertionHandler) {
        return environment
      }
      throw MsglogError.cannotRead(
        location: shown,
        reason: "another user's process\(held.pid.map { " (\($0))" } ?? "") has held the lock on its directory for "
          + "\(Int(Environment.openingPatience)) s, which msglog's processes hold only while they open the database "
          + "(anyone who may read the directory can take it)")
    } catch let error as LMDBError {
      throw MsglogError.cannotRead(location: shown, reason: "\(error.failure)")
    }
  }

  /// A database whose lock file is not its own (`DatabaseFiles.foreignLockFile`):
  /// a reader reads without a reader slot, as where it may not use the lock
  /// file at all; a writer, which would take the writers' mutex in it, is refused.
  private static func refusing(
    _ foreign: DatabaseFiles.ForeignLockFile, writer: Bool, _ path: String, shown: String,
    assertionHandler: Environment.AssertionHandler?
  ) throws -> Environment {
    if writer { throw MsglogError.readOnly(location: shown, store: .lmdb, reason: foreign.reason) }
    return try withoutLockFile(path, shown: shown, assertionHandler: assertionHandler)
  }

  /// The environment opened for reading without the lock file (no reader
  /// slot: `read` checks that no commit happened meanwhile).
  private static func withoutLockFile(
    _ path: String, shown: String, assertionHandler: Environment.AssertionHandler?
  ) throws -> Environment {
    do {
      return try Environment(
        path: path, readOnly: true, lockless: true, maxDatabases: maxDatabases, mapSize: initialMapSize,
        assertionHandler: assertionHandler)
    } catch let error as LMDBError {
      throw MsglogError.cannotRead(location: shown, reason: "\(error.failure)")
    }
  }

  /// The path as the user gave it, for messages.
  package let shown: String

  /// Whether reads go without a reader slot (the database is read-only to us).
  package var isLockless: Bool { environment.isLockless }

  /// How many times a transaction runs again for tables opened since it
  /// began: the tables opened when first needed are a handful.
  static let tableOpeningTries = 16

  /// Runs `body` in a read transaction; `body` may run more than once (a
  /// table this process opened since the transaction began: it runs again
  /// in a new one), so it must have no effect but its result.
  ///
  /// Without a reader slot (`isLockless`) nothing stops a writer elsewhere
  /// from reusing the pages being read, so a commit during the read makes
  /// it throw `ConcurrentCommit` rather than return what it saw; the caller
  /// may run it again.
  package func read<R>(_ body: (any LogReader) throws -> R) throws -> R {
    let before = isLockless ? environment.lastCommittedTransaction : 0
    let result: R
    do {
      result = try runAgainAfterTablesOpened {
        try environment.read { txn in
          let access = LogTransaction(tables: self, txn: txn)
          return try body(access)
        }
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
    var noted = false
    let result = try runAgainAfterTablesOpened {
      try environment.write(reserving: bytes) { txn in
        try checkBuffers(in: txn)
        noted = environment.hasWritten && !buffersNoted.load(ordering: .relaxed)
        if noted { try noteReusedBuffers(in: txn) }
        let access = LogTransaction(tables: self, txn: txn, inPieces: inPieces)
        let result = try body(access)
        try access.giveLogAnID()
        try access.finishPurgeMarks()
        rebuilt = access.rebuiltInFormat
        return result
      }
    }
    if rebuilt { formatIsCurrent.withLock { $0 = true } }
    if noted { buffersNoted.store(true, ordering: .relaxed) }
    return result
  }

  /// Runs `transaction` again while it needed a table another transaction
  /// of this process opened after it began (`TableOpenedSince`), once that
  /// one is done: each table is opened once in a process, so it runs again
  /// a few times at most (`tableOpeningTries` bounds a bug).
  private func runAgainAfterTablesOpened<R>(_ transaction: () throws -> R) throws -> R {
    var tries = 0
    while true {
      do {
        return try transaction()
      } catch is TableOpenedSince where tries < Self.tableOpeningTries {
        tries += 1
        environment.waitForTableOpeners()
      }
    }
  }
}
