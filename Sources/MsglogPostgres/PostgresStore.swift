import MsglogCore
import Synchronization

#if canImport(Glibc)
  import Glibc
#endif

/// The event log in a PostgreSQL database, behind the same protocols as LMDB.
///
/// Tables live in a schema of their own (`msglog`), so the log can share a
/// database with other applications' tables; the schema is created by the
/// first write and carries a version. Writers are serialised by one row,
/// `msglog.head`, locked `FOR UPDATE` at the start of every write
/// transaction: seqs are then gapless and in commit order across any number
/// of clients on any number of machines, and each write validates against
/// the state it will commit on. Readers take a repeatable-read snapshot.
///
/// Only plain SQL: tables, one row lock, `ON CONFLICT`, `unnest` of arrays,
/// `NOTIFY` for followers — no PL/pgSQL, advisory locks or extensions.
///
/// Connections are pooled: the store may be shared by threads; each
/// transaction takes a connection of its own.
public final class PostgresStore: FollowableStore {
  /// The URL as libpq reads it (it may hold a password: never shown).
  let conninfo: String
  /// The URL without its secrets, rebuilt from libpq's parse, for every message.
  public let shown: String
  /// Connections at rest (see `giveBack`): never one in a transaction.
  private let idle = Mutex<[Connection]>([])
  /// Whether the schema has been checked (or created) by this process.
  private let schemaReady = Mutex(false)

  /// The schema version this msglog writes once the log holds a record of
  /// format 2 (an edit, a restore, an undo); it reads 1 and 2.
  public static let schemaVersion = "2"
  /// The version a new log starts at: the tables of both are the same, so a
  /// log without the new events stays readable by a msglog that knows only 1.
  static let firstSchemaVersion = "1"
  static let readableSchemaVersions: Set<String> = ["1", "2"]
  /// Whether the schema is known to be at `schemaVersion` (read, or moved there by a commit).
  private let schemaAtNewest = Mutex(false)
  var schemaHoldsNewRecords: Bool { schemaAtNewest.withLock { $0 } }

  /// - Throws: `MsglogError.cannotConnect` when libpq cannot be loaded or
  ///   the URL cannot be read safely (see `PostgresLocation`).
  public init(location: String) throws(MsglogError) {
    let parsed = try PostgresLocation(location)
    conninfo = parsed.conninfo
    shown = parsed.shown
  }

  /// Whether a location names a PostgreSQL database (`postgres://` or
  /// `postgresql://`, in any case).
  public static func handles(_ location: String) -> Bool { PostgresLocation.isPostgres(location) }

  // MARK: - Transactions

  /// A repeatable-read snapshot. On any failure the transaction is left
  /// open here and rolled back as the connection goes back (`giveBack`).
  package func read<R>(_ body: (any LogReader) throws -> R) throws -> R {
    try withConnection(checkingSchema: true, writing: false) { connection in
      try connection.execute("BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY")
      let result = try body(Access(connection: connection, store: self, writing: false))
      try connection.execute("COMMIT")
      return result
    }
  }

  /// One write transaction: lock the head row, run `body` (whose writes are
  /// buffered and sent in batches), then send what is left, move the head,
  /// notify followers and commit — one round trip. Acknowledged only when
  /// the server has made the commit durable.
  ///
  /// The first write creates the schema in its own transaction, so that a
  /// refused first write leaves nothing behind. Two first writers may race:
  /// the loser's CREATE SCHEMA fails, it rolls back and writes again into
  /// what the winner made. Any other failure, at any step, leaves the
  /// transaction to `giveBack`, which rolls it back or drops the connection.
  package func write<R>(reserving bytes: Int, _ body: (any LogWriter) throws -> R) throws -> R {
    try write(reserving: bytes, touching: [], body)
  }

  /// With the streams the write touches, the opening round trip also fetches
  /// each one's head, last event and order-tree root (after taking the lock,
  /// so they are what the write will commit on): a small write is then two
  /// round trips — this one and the commit — plus one per deeper tree level.
  package func write<R>(reserving bytes: Int, touching streams: [StreamName], _ body: (any LogWriter) throws -> R)
    throws -> R
  {
    try withConnection(checkingSchema: false, writing: true) { connection in
      var exists = try schemaExists(connection)
      while true {
        var opening = [Statement("BEGIN")]
        if !exists { opening += PostgresSchema.creation }
        opening.append(Statement("SELECT seq FROM msglog.head WHERE id = 1 FOR UPDATE"))
        let lockAt = opening.count - 1
        opening += Access.prefetch(streams)
        let rows: [Rows]
        do {
          rows = try connection.pipeline(opening)
        } catch let error as PostgresError where !exists && PostgresSchema.lostTheRace(error) {
          guard try rollBack(connection) else { throw error }
          exists = try schemaExists(connection, recheck: true)
          guard exists else { throw error }
          continue
        } catch let error as PostgresError where !exists && error.sqlState == PostgresError.insufficientPrivilege {
          // The first statement that can be refused is CREATE SCHEMA.
          throw MsglogError.permissionDenied(
            location: shown, writing: true, reason: error.message,
            needed: "the first write creates schema msglog, which needs CREATE on the database")
        }
        guard let head = rows[lockAt].uint64(0, 0) else {
          throw MsglogError.notAMsglogDatabase(location: shown, reason: "its msglog.head row is missing")
        }
        let access = Access(connection: connection, store: self, writing: true, head: head)
        try access.adopt(prefetched: Array(rows[(lockAt + 1)...]), for: streams)
        let result = try body(access)
        try access.commit()
        if !exists { schemaReady.withLock { $0 = true } }
        if access.upgradesSchema { schemaAtNewest.withLock { $0 = true } }
        return result
      }
    }
  }

  package func watchCommits() throws -> any CommitWatcher {
    try translatingErrors(writing: false) {
      let connection = try borrow()
      defer { giveBack(connection) }
      guard try schemaExists(connection) else { throw MsglogError.noDatabase(location: shown, emptyDirectory: false) }
      return try NotificationWatcher(conninfo: conninfo, shown: shown)
    }
  }

  // MARK: - Connections

  private func borrow() throws -> Connection {
    if let connection = idle.withLock({ $0.popLast() }) { return connection }
    do {
      return try Connection(conninfo)
    } catch {
      throw MsglogError.cannotConnect(location: shown, reason: error.message)
    }
  }

  /// Puts a connection back in the pool only at rest: a transaction a
  /// failure left open (or failed) is rolled back first, and a connection
  /// that cannot be brought back to rest — broken, stuck in a pipeline, a
  /// ROLLBACK that failed — is dropped (closed) instead. Every transaction
  /// ends here, on every path, so no request inherits another's failure.
  private func giveBack(_ connection: Connection) {
    if connection.isInTransaction { _ = try? rollBack(connection) }
    guard connection.isIdle else { return }
    idle.withLock { $0.append(connection) }
  }

  /// Rolls back the open transaction; whether the connection is at rest after it.
  private func rollBack(_ connection: Connection) throws(PostgresError) -> Bool {
    guard !connection.isBroken else { return false }
    try connection.execute("ROLLBACK")
    return connection.isIdle
  }

  /// Runs `body` on a pooled connection (for a reader, after checking the
  /// schema is there); translates the server's errors into `MsglogError`s.
  private func withConnection<R>(checkingSchema: Bool, writing: Bool, _ body: (Connection) throws -> R) throws -> R {
    try translatingErrors(writing: writing) {
      let connection = try borrow()
      defer { giveBack(connection) }
      if checkingSchema, try !schemaExists(connection) {
        throw MsglogError.noDatabase(location: shown, emptyDirectory: false)
      }
      return try body(connection)
    }
  }

  func translatingErrors<R>(writing: Bool, _ body: () throws -> R) throws -> R {
    do {
      return try body()
    } catch let error as PostgresError {
      throw translate(error, writing: writing)
    } catch let damage as DerivedDamage {
      throw MsglogError.derivedDamage(damage)
    }
  }

  /// The privileges msglog's reads and writes take (README lists the GRANTs).
  static let readingNeeds = "reading needs USAGE on schema msglog and SELECT on its tables"
  static let writingNeeds = "writing needs USAGE on schema msglog and SELECT, INSERT, UPDATE and DELETE on its tables"

  func translate(_ error: PostgresError, writing: Bool) -> MsglogError {
    switch error.sqlState {
    case PostgresError.diskFull?: return .diskFull("the server has no room to write (\(error.message))")
    case PostgresError.readOnlyTransaction?: return .readOnly(location: shown, reason: error.message)
    case PostgresError.insufficientPrivilege?:
      return .permissionDenied(
        location: shown, writing: writing, reason: error.message,
        needed: writing ? Self.writingNeeds : Self.readingNeeds)
    case PostgresError.uniqueViolation?:
      // The database's own constraints: a second event at a stream's
      // version, or an id inserted twice. The write path refuses these
      // first; reaching them means derived rows disagree with the log.
      return .derivedDamage(DerivedDamage(table: "events", "the database refused a duplicate: \(error.message)"))
    default:
      if error.isConnectionLost { return .connectionLost(location: shown, reason: error.message) }
      return .storage("database error: \(error.message)")
    }
  }

  // MARK: - Schema

  /// Whether the database holds a msglog log of a version this msglog
  /// knows (checked once per process); false when it holds none yet.
  private func schemaExists(_ connection: Connection, recheck: Bool = false) throws -> Bool {
    if !recheck, schemaReady.withLock({ $0 }) { return true }
    let version = try PostgresSchema.check(connection, shown: shown)
    if version == PostgresStore.schemaVersion { schemaAtNewest.withLock { $0 = true } }
    if version != nil { schemaReady.withLock { $0 = true } }
    return version != nil
  }
}
