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
  /// Whether the last write found the head moved after its snapshot.
  private let contended = Mutex(false)
  /// What this process's last write left known (see `KnownState`).
  private let known = Mutex<KnownState?>(nil)

  /// The schema's and the tables' versions as this process last read or
  /// moved them (nil: not read yet; see `PostgresSchema.format` and
  /// `PostgresSchema+Tables`).
  private let knownVersions = Mutex<PostgresSchema.Versions?>(nil)
  var schemaVersion: Int? { knownVersions.withLock { $0?.schema } }
  var tablesVersion: Int? { knownVersions.withLock { $0?.tables } }
  /// Whether this role owns schema msglog, once a write on tables that
  /// are behind asked (`Access.ownsSchema`).
  let ownsSchema = Mutex<Bool?>(nil)
  /// Whether a write of this process has made sure the log has its id.
  private let logHasID = Mutex(false)

  /// Gives a log made before logs had ids its id, with this process's
  /// first write that appends (an id the log has is kept).
  private func giveLogAnID(with access: Access) {
    guard access.lastAppended != nil, !logHasID.withLock({ $0 }) else { return }
    access.buffer.giveLogID(.random())
  }

  /// After a commit that gave the log its id (or found it had one).
  private func noteLogID(of access: Access) {
    if access.lastAppended != nil { logHasID.withLock { $0 = true } }
  }

  /// Notes the schema's and the tables' versions, read or moved on by a commit.
  private func noteVersions(schema: Int? = nil, tables: Int? = nil) {
    knownVersions.withLock { known in
      let schema = max(known?.schema ?? schema ?? 0, schema ?? 0)
      known = PostgresSchema.Versions(schema: schema, tables: max(known?.tables ?? tables ?? 0, tables ?? 0))
    }
  }

  func noteVersions(_ versions: PostgresSchema.Versions) {
    noteVersions(schema: versions.schema, tables: versions.tables)
  }

  /// Notes what a commit moved: the schema's version, the tables.
  private func noteUpgrades(of access: Access) {
    if let version = access.buffer.schemaUpgrade { noteVersions(schema: version) }
    if access.buffer.tablesUpgrade != nil { noteVersions(tables: PostgresSchema.tablesVersion) }
  }

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
    try withConnection(writing: false) { connection in
      guard try open(connection, [PostgresSchema.beginReading], creating: false) != nil
      else { throw MsglogError.noDatabase(location: shown, store: .postgres, emptyDirectory: false) }
      let result = try body(Access(connection: connection, store: self, state: .reading))
      try connection.execute(PostgresSchema.commit.sql)
      return result
    }
  }

  package var kind: MsglogError.Store { .postgres }
  /// A new PostgreSQL log is built in bulk (`COPY`); `isStandby()` is with
  /// its connections.
  package var loadsInBulk: Bool { true }

  package func write<R>(reserving bytes: Int, _ body: (any LogWriter) throws -> R) throws -> R {
    try write(reserving: bytes, touching: [], body)
  }

  /// One write transaction, whose critical section holds no client round
  /// trip: the head row is locked in the same pipeline that sends the
  /// writes, the notification and the `COMMIT`.
  ///
  /// Optimistic first: the opening round trip takes a repeatable-read
  /// snapshot and fetches the head, the server's clock and the touched
  /// streams' heads, last events and order-tree roots without a lock;
  /// `body` validates against that snapshot (reading more if it must) and
  /// buffers its writes; the commit sends `SELECT … FOR UPDATE` on the head
  /// row first. If another writer committed after the snapshot, that lock
  /// fails (could not serialize) before anything is written, and the write
  /// runs again the locked way: lock, read, validate, commit — seqs stay
  /// gapless and in commit order either way. A refusal found on the
  /// snapshot is a refusal at the moment the snapshot was taken, within the
  /// request's own lifetime.
  ///
  /// The first write creates the schema in its own transaction, so that a
  /// refused first write leaves nothing behind. Two first writers may race:
  /// the loser's CREATE SCHEMA fails, it rolls back and writes again into
  /// what the winner made. Any other failure, at any step, leaves the
  /// transaction to `giveBack`, which rolls it back or drops the connection.
  package func write<R>(reserving bytes: Int, touching streams: [StreamName], _ body: (any LogWriter) throws -> R)
    throws -> R
  {
    try withConnection(writing: true) { connection in
      // What this process's last write left known: no round trip before the commit.
      if let state = takeKnown(covering: streams) {
        let access = Access(
          connection: connection, store: self, state: .knowing(head: state.head, version: state.headVersion),
          cache: state.streams, commitTime: state.time)
        do {
          let result = try body(access)
          giveLogAnID(with: access)
          try access.bringTablesUpIfOwner()
          try access.commit()
          // A write that sent nothing checked nothing: what it decided on
          // what was known (nothing to do, or refusals within a batch) may
          // be stale, and is decided again the ordinary way.
          if access.state.checkedKnown {
            noteLogID(of: access)
            noteUpgrades(of: access)
            keep(
              access.knownAfterCommit(serverClock: state.serverClock, readAt: state.readAt, lastTime: state.lastTime))
            return result
          }
        } catch let error as PostgresError where error.sqlState == PostgresError.divisionByZero {
          // Another writer committed since: nothing was written. The ordinary way.
          if connection.isInTransaction { guard try rollBack(connection) else { throw error } }
        } catch let refusal as MsglogError where refusal.category != .forbidden {
          // Refused on what was known, which another writer may have changed
          // since (an undo of an event appended meanwhile): nothing was
          // written, and the ordinary way decides on the log as it is.
          if connection.isInTransaction { guard try rollBack(connection) else { throw refusal } }
        }
      }
      var creating = false
      // After a write that lost its optimism, the next one locks at once:
      // writers elsewhere are busy.
      var optimistic = !contended.withLock { flag in
        defer { flag = false }
        return flag
      }
      while true {
        var opening = [optimistic ? PostgresSchema.beginSnapshot : PostgresSchema.begin]
        if creating { opening += PostgresSchema.creation }
        opening.append(PostgresSchema.opening(locking: !optimistic))
        let headAt = opening.count - 1
        opening += Opening.prefetch(streams)
        let rows: [Rows]
        do {
          guard let opened = try open(connection, opening, creating: creating) else {
            // No schema yet: create it, in a transaction that locks.
            creating = true
            optimistic = false
            continue
          }
          rows = opened
        } catch let error as PostgresError where creating && PostgresSchema.lostTheRace(error) {
          // Another first writer made the schema: write into it.
          guard try rollBack(connection) else { throw error }
          creating = false
          continue
        } catch let error as PostgresError where error.sqlState == PostgresError.readOnlyTransaction {
          throw try readOnlyRefusal(error, on: connection)
        }
        let readAt = ContinuousClock.now
        let opened = try Opening(rows[headAt], shown: shown)
        if opened.inRecovery {
          throw MsglogError.readOnly(location: shown, store: .postgres, reason: Self.replicaRefusal)
        }
        let access = Access(
          connection: connection, store: self,
          state: .opened(head: opened.head, locked: !optimistic, creating: creating),
          cache: try StreamCache(prefetched: Array(rows[(headAt + 1)...]), for: streams), commitTime: opened.time)
        do {
          let result = try body(access)
          giveLogAnID(with: access)
          try access.bringTablesUpIfOwner()
          try access.commit()
          if creating {
            schemaReady.withLock { $0 = true }
            // Its maker owns the schema, with every table this msglog makes.
            noteVersions(schema: PostgresSchema.firstVersion, tables: PostgresSchema.tablesVersion)
            ownsSchema.withLock { $0 = true }
          }
          noteLogID(of: access)
          noteUpgrades(of: access)
          keep(access.knownAfterCommit(serverClock: opened.serverClock, readAt: readAt, lastTime: opened.lastTime))
          return result
        } catch let error as PostgresError where optimistic && error.sqlState == PostgresError.serializationFailure {
          // The head moved after the snapshot: nothing was written. Again, locked.
          guard try rollBack(connection) else { throw error }
          contended.withLock { $0 = true }
          optimistic = false
        } catch let error as PostgresError where error.sqlState == PostgresError.readOnlyTransaction {
          throw try readOnlyRefusal(error, on: connection)
        }
      }
    }
  }

  /// What this process's last write left known, taken (one writer uses it
  /// at a time) when it covers `streams` and is fresh enough.
  private func takeKnown(covering streams: [StreamName]) -> KnownState? {
    known.withLock { known in
      guard let state = known, state.covers(streams) else { return nil }
      known = nil
      return state
    }
  }

  /// Keeps what a write that committed leaves known (nil: nothing).
  private func keep(_ state: KnownState?) {
    known.withLock { $0 = state }
  }

  /// What a hot standby (or any server in recovery) answers a write with.
  static let replicaRefusal = "this server is a read-only replica"

  /// A write refused as read-only: by a replica (said so), or by a server
  /// or role set to read-only (the server's words).
  private func readOnlyRefusal(_ error: PostgresError, on connection: Connection) throws -> MsglogError {
    if try rollBack(connection), try connection.execute(PostgresSchema.inRecovery.sql).bool(0, 0) == true {
      return .readOnly(location: shown, store: .postgres, reason: Self.replicaRefusal)
    }
    return .readOnly(location: shown, store: .postgres, reason: error.message)
  }

  /// Sends a transaction's opening statements (the first is its `BEGIN`) in
  /// one round trip, checking the schema with them the first time this
  /// process meets the database. Nil when there is no schema yet (and
  /// `creating` is false): the transaction is rolled back, and a reader
  /// gets `noDatabase`.
  ///
  /// A pooled connection that fails here has done nothing yet, so
  /// `withConnection` may run the transaction again on a fresh one.
  private func open(_ connection: Connection, _ statements: [Statement], creating: Bool) throws -> [Rows]? {
    let checking = !creating && !schemaReady.withLock { $0 }
    var opening = statements
    if checking { opening.insert(PostgresSchema.metaQuery, at: 1) }
    let sent = Result { () throws(PostgresError) -> [Rows] in try connection.pipeline(opening) }
    switch sent {
    case .success(let rows):
      guard checking else { return rows }
      noteVersions(try PostgresSchema.evaluate(rows[1], shown: shown))
      schemaReady.withLock { $0 = true }
      return Array(rows[0..<1] + rows[2...])
    case .failure(let error) where checking && PostgresSchema.isMissing(error):
      // Say precisely what is (or is not) there, outside the failed transaction.
      guard try rollBack(connection) else { throw error }
      guard try schemaExists(connection, recheck: true) else { return nil }
      return try open(connection, statements, creating: false)  // made meanwhile
    case .failure(let error) where error.isConnectionLost:
      throw Unopened(error: error)
    case .failure(let error):
      throw error
    }
  }

  /// A transaction's opening round trip found its connection gone: nothing
  /// was done on it.
  struct Unopened: Error {
    var error: PostgresError
  }

  /// Whether the server is a hot standby (in recovery): its reads are a
  /// replica's, and it takes no writes (`/readyz` says so).
  package func isStandby() throws -> Bool {
    try translatingErrors(writing: false) {
      let connection = try borrow().connection
      defer { giveBack(connection) }
      return try connection.execute(PostgresSchema.inRecovery.sql).bool(0, 0) == true
    }
  }

  package func watchCommits() throws -> any CommitWatcher {
    try translatingErrors(writing: false) {
      let connection = try borrow().connection
      defer { giveBack(connection) }
      guard try schemaExists(connection) else {
        throw MsglogError.noDatabase(location: shown, store: .postgres, emptyDirectory: false)
      }
      // A hot standby cannot LISTEN: there, a follower polls the head.
      if try connection.execute(PostgresSchema.inRecovery.sql).bool(0, 0) == true {
        return try HeadPoller(conninfo: conninfo, shown: shown)
      }
      return try NotificationWatcher(conninfo: conninfo, shown: shown)
    }
  }

  /// Wakes when the schema may have been made: the first write's commit
  /// notifies like every other (LISTEN needs no table), so a primary is
  /// listened to; a standby, which cannot LISTEN, is looked at every 100 ms.
  package func watchCreation() throws -> any CommitWatcher {
    try translatingErrors(writing: false) {
      let connection = try borrow().connection
      defer { giveBack(connection) }
      if try connection.execute(PostgresSchema.inRecovery.sql).bool(0, 0) == true {
        return IntervalWatcher(milliseconds: 100)
      }
      return try NotificationWatcher(conninfo: conninfo, shown: shown)
    }
  }

  // MARK: - Connections

  /// A connection at rest; `reused` when it comes from the pool.
  func borrow() throws -> (connection: Connection, reused: Bool) {
    while let connection = idle.withLock({ $0.popLast() }) {
      // One the server closed while it sat here (a restart, an idle
      // timeout) is dropped, not handed to a request.
      if !connection.hasGoneStale { return (connection, true) }
    }
    do {
      return (try Connection(conninfo), false)
    } catch {
      throw MsglogError.cannotConnect(location: shown, reason: error.message)
    }
  }

  /// Puts a connection back in the pool only at rest: a transaction a
  /// failure left open (or failed) is rolled back first, and a connection
  /// that cannot be brought back to rest — broken, stuck in a pipeline, a
  /// ROLLBACK that failed — is dropped (closed) instead. Every transaction
  /// ends here, on every path, so no request inherits another's failure.
  func giveBack(_ connection: Connection) {
    if connection.isInTransaction { _ = try? rollBack(connection) }
    guard connection.isIdle else { return }
    idle.withLock { $0.append(connection) }
  }

  /// Rolls back the open transaction; whether the connection is at rest after it.
  private func rollBack(_ connection: Connection) throws(PostgresError) -> Bool {
    guard !connection.isBroken else { return false }
    try connection.execute(PostgresSchema.rollBack.sql)
    return connection.isIdle
  }

  /// Runs `body` on a pooled connection; translates the server's errors
  /// into `MsglogError`s. A pooled connection that turns out dead in the
  /// transaction's opening round trip (the server restarted and it has not
  /// noticed yet) costs no error: the transaction runs once more, on a
  /// fresh connection.
  private func withConnection<R>(writing: Bool, _ body: (Connection) throws -> R) throws -> R {
    try translatingErrors(writing: writing) {
      var retried = false
      while true {
        let (connection, reused) = try borrow()
        defer { giveBack(connection) }
        do {
          return try body(connection)
        } catch let unopened as Unopened {
          guard reused, !retried else { throw unopened.error }
          retried = true
        }
      }
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

  func translate(_ error: PostgresError, writing: Bool) -> MsglogError {
    switch error.sqlState {
    case PostgresError.diskFull?: return .diskFull(store: .postgres, detail: error.message)
    case PostgresError.readOnlyTransaction?: return .readOnly(location: shown, store: .postgres, reason: error.message)
    case PostgresError.insufficientPrivilege?: return privilegeRefusal(error, writing: writing)
    case PostgresError.uniqueViolation?:
      // The database's own constraints: a second event at a stream's
      // version, or an id inserted twice. The write path refuses these
      // first; reaching them means derived rows disagree with the log.
      return .derivedDamage(DerivedDamage(table: "events", "the database refused a duplicate: \(error.message)"))
    default:
      if error.isConnectionLost { return .connectionLost(location: shown, reason: error.message) }
      return .storeFailure(store: .postgres, detail: error.message)
    }
  }

  // MARK: - Schema

  /// Whether the database holds a msglog log of a version this msglog
  /// knows (checked once per process); false when it holds none yet.
  private func schemaExists(_ connection: Connection, recheck: Bool = false) throws -> Bool {
    if !recheck, schemaReady.withLock({ $0 }) { return true }
    guard let versions = try PostgresSchema.check(connection, shown: shown) else { return false }
    noteVersions(versions)
    schemaReady.withLock { $0 = true }
    return true
  }
}
