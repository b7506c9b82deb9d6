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
package final class PostgresStore: FollowableStore {
  /// The URL as libpq reads it (it may hold a password: never shown).
  let conninfo: String
  /// The URL without its secrets, rebuilt from libpq's parse, for every message.
  package let shown: String
  /// Connections at rest (see `giveBack`): never one in a transaction.
  private let idle = Mutex<[Connection]>([])
  /// The highest head a commit of this process left, once durable: a head
  /// a notification announces at most this high is one this process has
  /// itself committed (`NotificationWatcher`).
  let committedHere = Mutex<UInt64>(0)
  /// What this process's writes leave for its next one: what is known,
  /// and how a write that opens with a round trip locks.
  let nextWrite = Mutex(NextWrite())

  /// The schema's and the tables' versions as this process last read or
  /// moved them (nil: not read yet, and the schema not checked; see
  /// `PostgresSchema.format` and `PostgresSchema+Tables`).
  private let knownVersions = Mutex<PostgresSchema.Versions?>(nil)
  var schemaVersion: Int? { knownVersions.withLock { $0?.schema } }
  var tablesVersion: Int? { knownVersions.withLock { $0?.tables } }
  /// Whether the schema has been checked (or created) by this process.
  private var schemaReady: Bool { knownVersions.withLock { $0 != nil } }
  /// Whether this role owns schema msglog, once a write on tables that
  /// are behind asked (`Access.ownsSchema`).
  let ownsSchema = Mutex<Bool?>(nil)
  /// Whether a write of this process has made sure the log has its id.
  let logHasID = Mutex(false)

  /// Notes the schema's and the tables' versions, read or moved on by a commit.
  func noteVersions(schema: Int? = nil, tables: Int? = nil) {
    knownVersions.withLock { known in
      let schema = max(known?.schema ?? schema ?? 0, schema ?? 0)
      known = PostgresSchema.Versions(schema: schema, tables: max(known?.tables ?? tables ?? 0, tables ?? 0))
    }
  }

  func noteVersions(_ versions: PostgresSchema.Versions) {
    noteVersions(schema: versions.schema, tables: versions.tables)
  }

  /// - Throws: `MsglogError.cannotConnect` when libpq cannot be loaded or
  ///   the URL cannot be read safely (see `PostgresLocation`).
  package init(location: String) throws(MsglogError) {
    let parsed = try PostgresLocation(location)
    conninfo = parsed.conninfo
    shown = parsed.shown
  }

  /// Whether a location names a PostgreSQL database (`postgres://` or
  /// `postgresql://`, in any case).
  package static func handles(_ location: String) -> Bool { PostgresLocation.isPostgres(location) }

  // MARK: - Transactions

  /// A repeatable-read snapshot. On any failure the transaction is left
  /// open here and rolled back as the connection goes back (`giveBack`).
  package func read<R>(_ body: (any LogReader) throws -> R) throws -> R {
    try withConnection(writing: false) { connection in
      // The horizon's row rides along: every walk of the log starts at it.
      guard
        let opened = try open(connection, [PostgresSchema.beginReading, PostgresSchema.horizonRow], creating: false)
      else { throw MsglogError.noDatabase(location: shown, store: .postgres, emptyDirectory: false) }
      let access = Access(connection: connection, store: self, state: .reading)
      access.openedHorizon = .some(opened[1].count == 0 ? nil : opened[1].copiedBytes(0, 0))
      let result = try body(access)
      try connection.execute(PostgresSchema.commit.sql)
      return result
    }
  }

  /// One statement, in no transaction of its own making; a snapshot's
  /// read (which checks the schema's versions) until this process has met
  /// the schema. A pooled connection found gone did nothing, and the read
  /// is made again on a fresh one, as a transaction's opening is.
  package func committedHead() throws -> UInt64 {
    guard schemaReady else { return try read { try $0.headSeq() } }
    return try withConnection(writing: false) { connection in
      do {
        return try connection.execute(PostgresSchema.headSeq.sql).uint64(0, 0) ?? 0
      } catch let error as PostgresError where error.isConnectionLost {
        throw Unopened(error: error)
      }
    }
  }

  package var kind: MsglogError.Store { .postgres }
  /// A new PostgreSQL log is built in bulk (`COPY`); `isStandby()` is with
  /// its connections.
  package var loadsInBulk: Bool { true }

  /// What a hot standby (or any server in recovery) answers a write with.
  static let replicaRefusal = MsglogError.replicaRefusal

  /// A write refused as read-only: by a replica (said so), or by a server
  /// or role set to read-only (the server's words).
  func readOnlyRefusal(_ error: PostgresError, on connection: Connection) throws -> MsglogError {
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
  func open(_ connection: Connection, _ statements: [Statement], creating: Bool) throws -> [Rows]? {
    let checking = !creating && !schemaReady
    var opening = statements
    if checking { opening.insert(PostgresSchema.metaQuery, at: 1) }
    let sent = Result { () throws(PostgresError) -> [Rows] in try connection.pipeline(opening) }
    switch sent {
    case .success(let rows):
      guard checking else { return rows }
      noteVersions(try PostgresSchema.evaluate(rows[1], shown: shown))
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
      let head = try connection.execute(PostgresSchema.headSeq.sql).uint64(0, 0) ?? 0
      return try notificationWatcher(readingHeadFrom: head)
    }
  }

  /// A `LISTEN`ing watcher that takes a head this process committed at its
  /// word; with `head` (a log that is there, its head now), one that also
  /// reads the head after a second without a notification.
  private func notificationWatcher(readingHeadFrom head: UInt64?) throws -> NotificationWatcher {
    try NotificationWatcher(
      conninfo: conninfo, shown: shown, head: head ?? 0, readHead: head == nil ? nil : { try self.committedHead() },
      committedHere: { self.committedHere.withLock { $0 } })
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
      return try notificationWatcher(readingHeadFrom: nil)
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
  func rollBack(_ connection: Connection) throws(PostgresError) -> Bool {
    guard !connection.isBroken else { return false }
    try connection.execute(PostgresSchema.rollBack.sql)
    return connection.isIdle
  }

  /// Runs `body` on a pooled connection; translates the server's errors
  /// into `MsglogError`s. A pooled connection that turns out dead in the
  /// transaction's opening round trip (the server restarted and it has not
  /// noticed yet) costs no error: the transaction runs once more, on a
  /// fresh connection.
  func withConnection<R>(writing: Bool, _ body: (Connection) throws -> R) throws -> R {
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
    case _ where !writing && error.isRecoveryConflictOnRead:
      return .readCancelled(location: shown, reason: error.message)
    default:
      if error.isConnectionLost { return .connectionLost(location: shown, reason: error.message) }
      return .storeFailure(store: .postgres, detail: error.message)
    }
  }

  // MARK: - Schema

  /// Whether the database holds a msglog log of a version this msglog
  /// knows (checked once per process); false when it holds none yet.
  private func schemaExists(_ connection: Connection, recheck: Bool = false) throws -> Bool {
    if !recheck, schemaReady { return true }
    guard let versions = try PostgresSchema.check(connection, shown: shown) else { return false }
    noteVersions(versions)
    return true
  }
}
