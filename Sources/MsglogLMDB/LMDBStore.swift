import MsglogCore
import Synchronization

#if canImport(Glibc)
  import Glibc
#endif

/// A log in an LMDB directory: the `EventStore` on LMDB, opened when first
/// used and safe to share between threads.
///
/// It owns what every caller would otherwise repeat: a database that does
/// not exist yet is created by the first write that succeeds, atomically
/// (built in a staging directory, put in place when it commits; an empty
/// directory given as the path is kept); a database
/// that may only be read is read without a reader slot, and a read that
/// raced a commit is run again. LMDB's own failures leave it as
/// `MsglogError`s (`MsglogError(_: LMDBError)`), as a PostgreSQL store's do.
package final class LMDBStore: FollowableStore {
  package let path: String
  package let access: LogAccess
  /// Called when one of LMDB's own consistency checks fails (see
  /// `Environment.AssertionHandler`); nil leaves LMDB's default, which
  /// prints the check and aborts.
  package let assertionHandler: Environment.AssertionHandler?
  /// The open tables, once there is a database to open.
  private let opened = Mutex<LMDBTables?>(nil)
  /// How many writes wait for the reads and writes under way to let go of
  /// the open tables, to open them afresh (`openAfresh`): new ones wait
  /// while any does, so that a steady stream of reads cannot keep it waiting.
  private let draining = Atomic(0)
  /// Why the tables were opened for reading though writes were asked for.
  private let writeRefusal = Mutex<MsglogError?>(nil)

  package init(path: String, access: LogAccess = .readWrite, assertionHandler: Environment.AssertionHandler? = nil) {
    self.path = path
    self.access = access
    self.assertionHandler = assertionHandler
  }

  package var kind: MsglogError.Store { .lmdb }

  /// Whether reads go without a reader slot (the database is read-only to
  /// us): a caller that streams output should hold it until `read` returns.
  package var readsWithoutLock: Bool {
    (try? tables(creating: false))?.isLockless ?? false
  }

  /// The open tables; nil when there is no database yet.
  func tables(creating: Bool) throws -> LMDBTables? {
    while draining.load(ordering: .acquiring) > 0 { usleep(200) }
    return try opened.withLock { opened in
      if let opened { return opened }
      // Say precisely what is (or is not) there before LMDB is let near it.
      switch try DatabaseFiles.probe(path, shown: path) {
      case .missing, .emptyDirectory:
        if creating { return nil }
        throw MsglogError.noDatabase(location: path, store: .lmdb, emptyDirectory: DatabaseFiles.isDirectory(path))
      case .database:
        break
      }
      let tables: LMDBTables
      // Shared with this process's other stores of the file (SharedTables).
      func open(create: Bool) throws -> LMDBTables {
        try SharedTables.tables(at: path, writer: create, shown: path) {
          try LMDBTables(path: path, create: create, assertionHandler: assertionHandler)
        }
      }
      switch access {
      case .readOnly:
        tables = try open(create: false)
      case .readWrite:
        do {
          tables = try open(create: true)
        } catch let refusal as MsglogError {
          guard case .readOnly = refusal else { throw refusal }
          writeRefusal.withLock { $0 = refusal }
          tables = try open(create: false)
        }
      }
      opened = tables
      return tables
    }
  }

  /// The open tables, in an environment that has never written (reopened
  /// if this one has, and nothing else holds it): LMDB reuses the page
  /// buffers of a process's writes without clearing them, and `purge`'s
  /// own commits had best not carry an erase's texts into new pages (its
  /// gap scan would zero them after, all the same).
  func tablesThatHaveNotWritten() throws -> LMDBTables? {
    opened.withLock { opened in
      // Held elsewhere too (a follow of this log): opening the environment
      // twice in one process would break LMDB's locks, so it stays.
      if opened?.environment.hasWritten == true, isKnownUniquelyReferenced(&opened) { opened = nil }
    }
    return try tables(creating: false)
  }

  /// Runs `body` in a read-only snapshot.
  ///
  /// - Warning: on a database read without a reader slot, `body` may run
  ///   more than once (a commit landed during an attempt); it must not act
  ///   on what it saw until `read` returns.
  package func read<R>(_ body: (any LogReader) throws -> R) throws -> R {
    try translatingErrors {
      guard let tables = try tables(creating: false) else {
        throw MsglogError.noDatabase(location: path, store: .lmdb, emptyDirectory: false)
      }
      guard tables.isLockless else { return try tables.read(body) }
      // A writer can reuse pages under a lockless read before its commit
      // shows (it publishes the new meta page last), so a torn read can
      // look like damage with no commit seen yet: an error is only believed
      // when it reads the same every time and no commit came meanwhile.
      var sawCommit = false
      var lastError: (any Error)? = nil
      for attempt in 0..<5 {
        let before = tables.lastCommit
        do {
          return try tables.read(body)
        } catch is ConcurrentCommit {
          sawCommit = true
        } catch {
          lastError = error
        }
        // Give a busy writer a moment to finish its burst before trying again.
        usleep(useconds_t(10_000 << attempt))
        if tables.lastCommit != before { sawCommit = true }
      }
      if sawCommit || lastError == nil { throw MsglogError.changedDuringRead(location: path) }
      throw lastError!
    }
  }

  package func write<R>(reserving bytes: Int, touching streams: [StreamName], _ body: (any LogWriter) throws -> R)
    throws -> R
  {
    try checkMayWrite()
    return try translatingErrors {
      while true {
        do {
          let result = try writeOnce(reserving: bytes, body)
          // Committed into a file nobody will open again (its directory
          // removed or replaced since it was opened): not acknowledged.
          if isDisplaced { throw MsglogError.writtenDatabaseDisplaced(location: path) }
          return result
        } catch let stale as BuffersPredatePurge {
          openAfresh(after: stale)
        }
      }
    }
  }

  private func writeOnce<R>(reserving bytes: Int, _ body: (any LogWriter) throws -> R) throws -> R {
    if let tables = try tables(creating: true) {
      try checkMayWrite()
      return try tables.write(reserving: bytes, body)
    }
    if let result = try createDatabase({ try $0.write(reserving: bytes, inPieces: true, body) }) { return result }
    // Someone else created it meanwhile: write into theirs.
    guard let tables = try tables(creating: true) else {
      throw MsglogError.noDatabase(location: path, store: .lmdb, emptyDirectory: false)
    }
    return try tables.write(reserving: bytes, body)
  }

  /// Refuses a write (a purge's too) where this store may not make one:
  /// opened for reading only, or on tables a writer could not open
  /// (`writeRefusal`, known once they are open).
  func checkMayWrite() throws {
    guard access == .readWrite else {
      throw MsglogError.readOnly(location: path, store: .lmdb, reason: "opened for reading only")
    }
    if let refusal = writeRefusal.withLock({ $0 }) { throw refusal }
  }

  /// How long a write waits, after a purge, for this process's other
  /// reads and writes to let go of the environment (in milliseconds).
  static let purgeDrainWait = 2_000

  /// After a purge committed since this process's page buffers were filled
  /// (`LMDBTables.checkBuffers`): lets go of the open tables once nothing
  /// else of this process holds them, so that the next write opens the
  /// environment afresh, with clean buffers — the environment is one per
  /// process (opening it twice would break LMDB's locks), so it waits for
  /// the reads in flight; those that begin meanwhile wait for it
  /// (`draining`), so that a steady stream of reads cannot keep it waiting.
  /// One under way that does not end within `purgeDrainWait` (a long
  /// export) lets the write go on in the buffers it has, and the next purge
  /// scrubs what they carry into the file.
  private func openAfresh(after stale: BuffersPredatePurge) {
    draining.wrappingAdd(1, ordering: .releasing)
    defer { draining.wrappingSubtract(1, ordering: .releasing) }
    for _ in 0..<Self.purgeDrainWait {
      let dropped = opened.withLock { opened -> Bool in
        // Another write of this process opened it afresh already.
        guard let current = opened?.environment, current.opening == stale.environment else { return true }
        guard isKnownUniquelyReferenced(&opened) else { return false }
        opened = nil
        return true
      }
      if dropped { return }
      usleep(1_000)
    }
    opened.withLock { opened in
      guard let current = opened?.environment, current.opening == stale.environment else { return }
      current.acceptBuffers(asOf: stale.purge)
    }
  }

  /// Whether the database this log opened is no longer the one at its
  /// path (the directory removed, or replaced by another): a write would
  /// land in a file nobody will open again. False before the first open,
  /// and when the path cannot be looked at for another reason (a
  /// permission taken away, NFS's ESTALE): that is no proof.
  package var isDisplaced: Bool {
    guard let store = opened.withLock({ $0 }) else { return false }
    guard let opened = store.environment.dataFileIdentity else { return true }
    var status = stat()
    guard stat(path + "/data.mdb", &status) == 0 else { return errno == ENOENT || errno == ENOTDIR }
    return FileIdentity(status) != opened
  }

  package func watchCommits() throws -> any CommitWatcher {
    try translatingErrors {
      guard try tables(creating: false) != nil else {
        throw MsglogError.noDatabase(location: path, store: .lmdb, emptyDirectory: false)
      }
      return try InotifyWatcher(file: path + "/data.mdb", shown: path, directory: path)
    }
  }

  /// Runs `body`; LMDB's failures leave as msglog's errors, here only.
  func translatingErrors<R>(_ body: () throws -> R) throws -> R {
    do {
      return try body()
    } catch let error as LMDBError {
      throw MsglogError(error, writing: path + "/data.mdb")
    }
  }

  /// Runs `write` on a new database in a staging directory and puts it at
  /// `path` when `write` succeeds (`DatabaseFiles.install`): a refused
  /// first write leaves nothing behind, nobody ever sees a half-made
  /// database, and an empty directory given as `path` is kept. Returns nil
  /// when a database appeared there meanwhile (another process made it).
  /// What killed processes left from their own first writes is swept first.
  func createDatabase<R>(_ write: (LMDBTables) throws -> R) throws -> R? {
    DatabaseFiles.sweepStaging(for: path)
    guard let staging = try StagingDirectory.make(for: path, purpose: .creating, shown: path) else { return nil }
    let result: R
    var dataFile: Int32 = -1
    defer { if dataFile >= 0 { close(dataFile) } }
    do {
      // The store is closed when this scope ends, before it is put in place.
      let tables = try LMDBTables(
        path: staging.path, create: true, shown: path, staging: true, assertionHandler: assertionHandler)
      dataFile = try DatabaseFiles.openData(of: staging.path)
      result = try write(tables)
    } catch let error as LMDBError {
      throw MsglogError(error, writing: staging.path + "/data.mdb")
    }
    try Self.scrubNewDatabase(at: staging.path)
    // No commit in the staging directory was synced (`staging`): one sync
    // takes them all, and the scrub's zeros, before the database is put in
    // place; install then syncs the new name before success is reported.
    try DatabaseFiles.syncData(dataFile, in: staging.path)
    guard try DatabaseFiles.install(staging.path, at: path) else { return nil }
    return result
  }
}

/// Wakes a follower when msglog's writers touch the timestamps of LMDB's
/// data file (`IN_ATTRIB`), which they do once a commit is visible and
/// only for a transaction that wrote something: one wake per commit. Not
/// on LMDB's own writes (`IN_MODIFY`): its meta page is written before the
/// commit can be read, so a wake there would read too early, and a second
/// time at the touch. (A writer killed between its commit and its touch
/// leaves its events to be seen with the next commit.)
///
/// With `directory`, also when that directory is moved or removed: a
/// database moved away (a backup moved into its place) changes no file,
/// and its follower must wake to find it displaced.
final class InotifyWatcher: CommitWatcher {
  let fd: Int32

  init(file: String, shown: String, events: UInt32 = UInt32(IN_ATTRIB), directory: String? = nil) throws {
    // Kept only once watching: a failed init of an object whose properties
    // are all set still runs its deinit, which would close it twice.
    let fd = inotify_init1(Int32(IN_NONBLOCK | IN_CLOEXEC))
    guard fd >= 0 else { throw MsglogError.systemRefused(.watch(location: shown), errno: errno) }
    guard inotify_add_watch(fd, file, events) >= 0 else {
      let code = errno
      close(fd)
      throw MsglogError.systemRefused(.watch(location: shown), errno: code)
    }
    // Best effort: a directory the user may enter but not read (0711)
    // cannot be watched, and is followed as before, a move of it unseen.
    if let directory { _ = inotify_add_watch(fd, directory, UInt32(IN_MOVE_SELF | IN_DELETE_SELF)) }
    self.fd = fd
  }

  deinit { close(fd) }

  var fileDescriptor: Int32 { fd }

  /// Any change to the file may be a commit.
  func drain() throws -> Bool {
    var buffer = [UInt8](repeating: 0, count: 4096)
    while buffer.withUnsafeMutableBytes({ Glibc.read(fd, $0.baseAddress, $0.count) }) > 0 {}
    return true
  }
}

extension LMDBStore {
  /// Holds the replica's sync lock (an exclusive `flock` on its data file,
  /// which LMDB's own locks never take) until released; nil when another
  /// process holds it. One sync at a time per replica.
  ///
  /// A lock just released can look held for a moment: a child this process
  /// forks (to run another program) shares the open file description until
  /// it execs. So a held lock is tried again for a quarter of a second
  /// before it counts as another sync's.
  package func lockForSync() throws -> SyncLock? {
    let fd = open(path + "/data.mdb", O_RDONLY | O_CLOEXEC)
    guard fd >= 0 else { throw MsglogError.cannotRead(location: path, reason: systemMessage(errno)) }
    for attempt in 0..<26 {
      if flock(fd, LOCK_EX | LOCK_NB) == 0 { return SyncLock(fd: fd) }
      guard errno == EWOULDBLOCK || errno == EINTR else {
        let code = errno
        close(fd)
        throw MsglogError.systemRefused(.syncLock(location: path), errno: code)
      }
      if attempt < 25 { usleep(10_000) }
    }
    close(fd)
    return nil
  }
}

/// A replica's sync lock, released when it goes.
package final class SyncLock {
  let fd: Int32
  init(fd: Int32) { self.fd = fd }
  deinit { close(fd) }
}
