import CLMDB
import Synchronization

#if canImport(Glibc)
  import Glibc
#endif

/// An open LMDB environment (one database directory).
///
/// Transactions are lent to closures: `write` commits when its closure
/// returns and aborts when it throws, and the first error wins. A write that
/// fills the map is rolled back, the map doubled, and the closure run again
/// from the start, so users never see `MDB_MAP_FULL`.
package final class Environment {
  /// What happens when one of LMDB's own consistency checks fails inside a
  /// call: LMDB aborts the process once the handler returns, so a program
  /// that wants a clear message and exit code prints and exits in it (the
  /// command line does). `lockless` says whether the environment was read
  /// without the lock file, where a concurrent commit can make pages change
  /// under a read; otherwise the database is damaged.
  package typealias AssertionHandler = @Sendable (_ lockless: Bool, _ message: String) -> Void

  /// The handler as LMDB's user context, so that the C callback (which
  /// captures nothing) finds it from the environment it is given.
  private final class AssertionContext {
    let handler: AssertionHandler
    init(_ handler: @escaping AssertionHandler) { self.handler = handler }
  }

  let env: OpaquePointer
  /// Retained for as long as LMDB may call back with it.
  private let assertionContext: Unmanaged<AssertionContext>?
  package let path: String
  /// Which opening of an environment in this process this is (1, 2, …):
  /// told apart from a later one where an address could be reused.
  package let opening = Environment.openings.add(1, ordering: .relaxed).newValue
  private static let openings = Atomic(0)
  package let isReadOnly: Bool
  /// Opened without the lock file (`MDB_NOLOCK`): no reader slot protects a
  /// read from a concurrent writer, so readers must check
  /// `lastCommittedTransaction` before and after.
  package let isLockless: Bool

  /// Opens (or, for a writer, creates the files of) the environment in the
  /// directory `path`, which must exist.
  ///
  /// - Parameters:
  ///   - mapSize: the map size for a new environment; an existing one keeps
  ///     at least the size it has.
  ///   - mode: permission bits for the files LMDB creates.
  ///   - assertionHandler: see `AssertionHandler`; nil keeps LMDB's own
  ///     (print the failed check, abort).
  package init(
    path: String, readOnly: Bool, lockless: Bool = false, maxDatabases: UInt32, mapSize: Int, mode: mode_t = 0o600,
    assertionHandler: AssertionHandler? = nil
  ) throws {
    precondition(readOnly || !lockless, "only a reader may go without the lock file")
    var env: OpaquePointer?
    try check(mdb_env_create(&env), "mdb_env_create")
    let context = assertionHandler.map { Unmanaged.passRetained(AssertionContext($0)) }
    // From here every failure must close the handle (and let go of the
    // context) before throwing.
    do {
      try check(mdb_env_set_maxdbs(env, maxDatabases), "mdb_env_set_maxdbs")
      try check(mdb_env_set_mapsize(env, mapSize), "mdb_env_set_mapsize")
      if let context {
        try check(mdb_env_set_userctx(env, context.toOpaque()), "mdb_env_set_userctx")
        try check(
          mdb_env_set_assert(env) { env, message in
            guard let raw = mdb_env_get_userctx(env) else { return }
            var flags: UInt32 = 0
            mdb_env_get_flags(env, &flags)
            Unmanaged<AssertionContext>.fromOpaque(raw).takeUnretainedValue().handler(
              flags & UInt32(MDB_NOLOCK) != 0, message.map { String(cString: $0) } ?? "")
          }, "mdb_env_set_assert")
      }
      // MDB_NOTLS: reader slots belong to transactions, not threads, so a
      // process can run several read transactions over its life safely.
      let flags = UInt32(MDB_NOTLS) | (readOnly ? UInt32(MDB_RDONLY) : 0) | (lockless ? UInt32(MDB_NOLOCK) : 0)
      // One opening at a time among msglog's processes (an exclusive
      // `flock` on the directory, released when the descriptor closes at
      // the end of this block). LMDB's first opener of a database resets
      // the lock file's header and writes the last transaction's id there
      // only at the end of `mdb_env_open`; one killed between left a
      // process that waited for its lock on a stale header, taken for a
      // live one: that process's write began from an older meta page, and
      // its commit vanished with the one before it. Now a process waits
      // here until the opener is done (the header whole) or gone (its
      // locks with it, so the waiter opens first and resets it itself).
      let directory = lockless ? -1 : open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
      defer { if directory >= 0 { close(directory) } }
      if directory >= 0 { try Self.lockForOpening(directory) }
      try check(mdb_env_open(env, path, flags, mode), "mdb_env_open")
      if !lockless {
        // Free reader slots left behind by processes that died holding them.
        var dead: Int32 = 0
        try check(mdb_reader_check(env, &dead), "mdb_reader_check")
      }
    } catch {
      mdb_env_close(env)
      context?.release()
      throw error
    }
    self.env = env!
    self.assertionContext = context
    self.path = path
    self.isReadOnly = readOnly
    self.isLockless = lockless
    var stat = MDB_stat()
    mdb_env_stat(self.env, &stat)
    self.pageSize = Int(stat.ms_psize)
    // Pages larger than the system's (a file made on another machine) may
    // not start at multiples of their size in memory.
    self.mapPageSize = pageSize <= Int(sysconf(Int32(_SC_PAGESIZE))) ? pageSize : nil
  }

  /// How long a process waits for the directory's lock held by another
  /// user before it gives up, in seconds. msglog's processes hold it only
  /// while LMDB opens (a few milliseconds, more on a loaded machine); anyone
  /// who may read the directory can take it too, and a process that waited
  /// for ever stalled every command of the database's owner as long as
  /// another user liked. A holder of the caller's own (another opening, or
  /// one the user stopped) is waited for as before.
  package static let openingPatience: Double = 5

  /// The directory's lock stayed with another user's process (`pid`, when
  /// the system says whose) past `openingPatience`.
  package struct OpeningLockHeld: Error {
    package var pid: pid_t?
  }

  /// Takes the exclusive `flock` on the database's directory `fd`. A file
  /// system without `flock` opens without it, as before.
  private static func lockForOpening(_ fd: Int32) throws {
    var deadline = ContinuousClock.now + .seconds(openingPatience)
    var pause: UInt32 = 200  // µs, doubled up to 20 ms
    while flock(fd, LOCK_EX | LOCK_NB) != 0 {
      guard errno == EWOULDBLOCK || errno == EINTR else { return }
      if ContinuousClock.now >= deadline {
        let holder = flockHolder(of: fd)
        if holder?.uid != geteuid() { throw OpeningLockHeld(pid: holder?.pid) }
        deadline = ContinuousClock.now + .seconds(openingPatience)
      }
      usleep(pause)
      pause = min(pause * 2, 20_000)
    }
  }

  /// Who holds a `flock` on the file `fd` (the first such holder in
  /// /proc/locks, and its real uid: a set-user-id program another user ran
  /// — `su` at its password prompt, holding a descriptor it was given —
  /// runs as root, and is still that user's); nil when the system does not say.
  static func flockHolder(of fd: Int32) -> (pid: pid_t, uid: uid_t)? {
    var file = Glibc.stat()
    guard fstat(fd, &file) == 0, let locks = fopen("/proc/locks", "r") else { return nil }
    defer { fclose(locks) }
    let dev = UInt64(file.st_dev)
    let major = ((dev >> 8) & 0xfff) | ((dev >> 32) & ~0xfff)
    let minor = (dev & 0xff) | ((dev >> 12) & ~0xff)
    var line: UnsafeMutablePointer<CChar>? = nil
    var capacity = 0
    defer { free(line) }
    while getline(&line, &capacity, locks) > 0, let line {
      // "1: FLOCK  ADVISORY  WRITE 1234 08:01:5678 0 EOF"; a waiter's line has "->" after its number.
      let fields = String(cString: line).split(separator: " ", omittingEmptySubsequences: true)
      guard fields.count >= 6, fields[1] == "FLOCK", let pid = pid_t(fields[4]) else { continue }
      let place = fields[5].split(separator: ":")
      guard place.count == 3, UInt64(place[0], radix: 16) == major, UInt64(place[1], radix: 16) == minor,
        UInt64(place[2]) == UInt64(file.st_ino)
      else { continue }
      return realUID(of: pid).map { (pid, $0) }
    }
    return nil
  }

  /// The real uid of process `pid` (/proc/PID/status, "Uid:" real effective saved fs).
  static func realUID(of pid: pid_t) -> uid_t? {
    guard let status = fopen("/proc/\(pid)/status", "r") else { return nil }
    defer { fclose(status) }
    var line: UnsafeMutablePointer<CChar>? = nil
    var capacity = 0
    defer { free(line) }
    while getline(&line, &capacity, status) > 0, let line {
      let fields = String(cString: line).split(whereSeparator: { $0 == " " || $0 == "\t" || $0 == "\n" })
      if fields.count >= 2, fields[0] == "Uid:" { return uid_t(fields[1]) }
    }
    return nil
  }

  /// Whether a write of this environment may have changed pages (it
  /// committed something, or was rolled back). LMDB keeps the page buffers
  /// of its writes and reuses them without clearing them, so a later write
  /// of this environment may put bytes of an earlier one in the unused
  /// middle of a page; `msglog purge` wants an environment without any.
  package var hasWritten: Bool { wrote.load(ordering: .relaxed) }
  private let wrote = Atomic(false)

  /// Says that the writes so far left nothing in the page buffers a later
  /// write must not carry (a new database's first rows, none of them text).
  package func forgetWrites() { wrote.store(false, ordering: .relaxed) }

  /// The id of the write transaction from which on this environment's page
  /// buffers hold bytes (its first write since it was opened or its writes
  /// forgotten): nothing in them is older than that commit's log. A purge
  /// that committed after it may have scrubbed from the file bytes these
  /// buffers still hold (`LMDBTables.checkBuffers`).
  package var buffersSince: Int { buffersFilledAt.load(ordering: .relaxed) }
  private let buffersFilledAt = Atomic(0)

  /// Takes the page buffers as no older than the transaction `id` (a purge
  /// whose scrub this process could not wait for: the next purge's finds
  /// what they carry).
  package func acceptBuffers(asOf id: Int) {
    buffersFilledAt.store(id, ordering: .relaxed)
    keptStaleBuffers.store(true, ordering: .relaxed)
  }

  /// Whether `acceptBuffers` took buffers a purge found older than itself:
  /// a write here may carry what that purge scrubbed into the file, for the
  /// next purge to find.
  package var buffersMayHoldScrubbedBytes: Bool { keptStaleBuffers.load(ordering: .relaxed) }
  private let keptStaleBuffers = Atomic(false)

  /// The id of the last committed write transaction, from the meta page.
  package var lastCommittedTransaction: Int {
    var info = MDB_envinfo()
    mdb_env_info(env, &info)
    return info.me_last_txnid
  }

  deinit {
    mdb_env_close(env)
    // Only now may another environment of this file open in this process.
    SharedTables.forget(opening: opening)
    assertionContext?.release()
    pthread_rwlock_destroy(resizeLock)
    resizeLock.deallocate()
  }

  /// Where this process maps the data file: LMDB keeps its map's address
  /// to itself (`me_mapaddr` is a fixed map's only), so it is read from
  /// /proc/self/maps, by the file's device and inode. (One range unless the
  /// process has the file open twice; each shows the same pages.)
  package func mappedRanges() -> [Range<UInt>] {
    var fd: Int32 = -1
    var file = Glibc.stat()
    guard mdb_env_get_fd(env, &fd) == 0, fstat(fd, &file) == 0, let maps = fopen("/proc/self/maps", "r") else {
      return []
    }
    defer { fclose(maps) }
    var ranges: [Range<UInt>] = []
    var line: UnsafeMutablePointer<CChar>? = nil
    var capacity = 0
    defer { free(line) }
    while getline(&line, &capacity, maps) > 0, let line {
      // start-end perms offset major:minor inode path
      let fields = String(cString: line).split(separator: " ", omittingEmptySubsequences: true)
      guard fields.count >= 6, UInt64(fields[4]) == UInt64(file.st_ino), fields[2].allSatisfy({ $0 == "0" }) else {
        continue
      }
      let device = fields[3].split(separator: ":").compactMap { UInt32($0, radix: 16) }
      let bounds = fields[0].split(separator: "-").compactMap { UInt($0, radix: 16) }
      // (glibc's major and minor of a dev_t)
      let dev = UInt64(file.st_dev)
      let major = UInt32(truncatingIfNeeded: ((dev >> 8) & 0xfff) | ((dev >> 32) & ~0xfff))
      let minor = UInt32(truncatingIfNeeded: (dev & 0xff) | ((dev >> 12) & ~0xff))
      guard device == [major, minor], bounds.count == 2 else { continue }
      ranges.append(bounds[0]..<bounds[1])
    }
    return ranges
  }

  /// LMDB's page size (the system's, when the environment was made).
  package let pageSize: Int
  /// The page size `PageBounds` checks a read's values by: nil when the
  /// map's pages need not be aligned to it.
  let mapPageSize: Int?

  /// The current map size in bytes.
  package var mapSize: Int {
    var info = MDB_envinfo()
    mdb_env_info(env, &info)
    return info.me_mapsize
  }

  /// Held by a transaction of this process that opens tables, until it ends.
  private let tableOpening = TableOpeningLock()

  /// Held shared by every transaction of this process and exclusively while
  /// the map is resized: LMDB allows `mdb_env_set_mapsize` only when the
  /// process has no transaction open, which threads sharing one environment
  /// cannot otherwise promise each other.
  private let resizeLock: UnsafeMutablePointer<pthread_rwlock_t> = {
    let lock = UnsafeMutablePointer<pthread_rwlock_t>.allocate(capacity: 1)
    pthread_rwlock_init(lock, nil)
    return lock
  }()

  /// Runs `body` with the map's size held still (any number of threads at once).
  private func sharing<R>(_ body: () throws -> R) rethrows -> R {
    pthread_rwlock_rdlock(resizeLock)
    defer { pthread_rwlock_unlock(resizeLock) }
    return try body()
  }

  /// Runs `body` while no other thread of this process has a transaction open.
  private func resizing<R>(_ body: () throws -> R) rethrows -> R {
    pthread_rwlock_wrlock(resizeLock)
    defer { pthread_rwlock_unlock(resizeLock) }
    return try body()
  }

  /// Runs `body` in a read-only transaction.
  package func read<R>(_ body: (Transaction) throws -> R) throws -> R {
    while true {
      let outcome: Result<R, any Error>? = try sharing {
        guard let txn = try begin(readOnly: true) else { return nil }
        defer { txn.invalidate() }
        let result: R
        do {
          result = try body(txn)
        } catch {
          mdb_txn_abort(txn.handle)
          return .failure(error)
        }
        // Commit rather than abort: database handles opened in this transaction
        // survive a commit, but an abort closes them.
        try check(mdb_txn_commit(txn.handle), "mdb_txn_commit")
        txn.publishOpenedTables()
        return .success(result)
      }
      guard let outcome else {
        try adoptResizedMap()
        continue
      }
      return try outcome.get()
    }
  }

  /// Runs `body` in a write transaction and commits it when it returns:
  /// durably, unless syncs are deferred (`deferSyncing`, a new database's
  /// staging directory, synced whole before it is put in place).
  ///
  /// `body` may run more than once: after a full map, everything it did is
  /// rolled back and it starts again on a bigger map. Once the commit is
  /// durable (or written, its syncs deferred) and visible, the data file's
  /// timestamps are touched, so that followers watching it (inotify) wake
  /// up after, never before, it can be read.
  package func write<R>(reserving bytes: Int = 0, _ body: (Transaction) throws -> R) throws -> R {
    precondition(!isReadOnly, "write on a read-only environment")
    // At least a little room, so that a small write rarely fills the map
    // (a writer's map starts at the file's size): a filled map rolls the
    // write back and runs it again, in page buffers LMDB kept from the
    // first run uncleared (`hasWritten`).
    let room = max(bytes, Self.leastRoom)
    if needsRoom(for: room) { try resizing { try makeRoom(for: room) } }
    while true {
      let attempt: WriteAttempt<R> = try sharing {
        guard let txn = try begin(readOnly: false) else { return .mapResized }
        do {
          try checkLengthBeforeWriting()
        } catch {
          mdb_txn_abort(txn.handle)
          txn.invalidate()
          throw error
        }
        if !hasWritten { buffersFilledAt.store(mdb_txn_id(txn.handle), ordering: .relaxed) }
        let result: R
        do {
          result = try body(txn)
        } catch let error as LMDBError where error.code == LMDBError.mapFull && !txn.committedPieces {
          // (A piece's commit that failed has freed its transaction already.)
          if txn.isOpen { mdb_txn_abort(txn.handle) }
          txn.invalidate()
          // The run again reuses this one's page buffers, uncleared.
          wrote.store(true, ordering: .relaxed)
          return .mapFull
        } catch {
          if txn.isOpen { mdb_txn_abort(txn.handle) }
          txn.invalidate()
          wrote.store(true, ordering: .relaxed)
          throw error
        }
        // mdb_txn_commit frees the transaction even when it fails: never abort after it.
        let id = mdb_txn_id(txn.handle)
        let rc = mdb_txn_commit(txn.handle)
        if rc == 0 { txn.publishOpenedTables() }
        txn.invalidate()
        if rc != 0 || lastCommitted >= id { wrote.store(true, ordering: .relaxed) }
        // A commit that wrote was synced, unless syncs are deferred: its pages start for the disk.
        if rc == 0, lastCommitted >= id, syncsDeferred.load(ordering: .relaxed) { startWriteback() }
        if rc == LMDBError.mapFull, !txn.committedPieces { return .mapFull }
        try check(Self.writeFailure(rc, at: path), "mdb_txn_commit")
        return .committed(result, wrote: txn.committedPieces || lastCommitted >= id)
      }
      switch attempt {
      case .committed(let result, let wrote):
        // A transaction that changed nothing (LMDB then writes nothing) is
        // no commit a follower should wake for: opening the log for a write
        // begins with one.
        if wrote { signalCommit() }
        return result
      case .mapFull: try resizing { try grow() }
      case .mapResized: try adoptResizedMap()
      }
    }
  }

  /// Whether commits skip their syncs (`deferSyncing`).
  private let syncsDeferred = Atomic(false)

  /// Makes every commit from now on skip LMDB's syncs (of the pages, then
  /// of the meta page) and start its pages on their way to the disk
  /// instead (`startWriteback`): for a new database in its staging
  /// directory only, nobody else's and never installed before its data
  /// file is synced whole (`DatabaseFiles.syncData`), so that a crash
  /// before then leaves a directory that is swept. The disk then writes a
  /// bulk build's pieces while the next ones are built, and the one sync
  /// at the end (which also takes the scrub's zeros) finds most of them
  /// written: a short import waited 4 ms of its 32 for a sync of pages
  /// written all at once at its last commit, and made three syncs.
  /// Called before the environment's first transaction.
  func deferSyncing() {
    mdb_env_set_flags(env, UInt32(MDB_NOSYNC), 1)
    syncsDeferred.store(true, ordering: .relaxed)
  }

  /// Asks the kernel to start writing the data file's dirty pages, without
  /// waiting for them (`sync_file_range`): no durability of its own, only
  /// less for the sync to wait for. A failure changes nothing that sync
  /// does, so it is not reported.
  private func startWriteback() {
    var fd: Int32 = -1
    guard mdb_env_get_fd(env, &fd) == 0, fd >= 0 else { return }
    _ = msglog_start_writeback(fd)
  }

  /// Commits what `txn`, a write nobody else can see yet (a new database
  /// in its staging directory, whose syncs are deferred), has done so far,
  /// and goes on in a new transaction in its place: a long write then
  /// holds one piece's dirty pages in memory, not all of them, and the
  /// disk writes each piece while the next is made. The database is
  /// synced whole before it is installed (`deferSyncing`), so that a crash
  /// before then leaves a database nobody installs rather than a
  /// half-synced one.
  ///
  /// Past the first piece the write cannot be run again on a bigger map,
  /// so the map grows here, between pieces, to stay at least twice what
  /// the file uses.
  package func commitPiece(_ txn: Transaction) throws {
    precondition(syncsDeferred.load(ordering: .relaxed), "a piece committed outside a staging directory")
    wrote.store(true, ordering: .relaxed)
    let rc = mdb_txn_commit(txn.handle)
    if rc == 0 {
      txn.publishOpenedTables()
      startWriteback()
    }
    txn.invalidate()
    try check(Self.writeFailure(rc, at: path), "mdb_txn_commit")
    var info = MDB_envinfo()
    mdb_env_info(env, &info)
    var stat = MDB_stat()
    mdb_env_stat(env, &stat)
    let used = (info.me_last_pgno + 1) * Int(stat.ms_psize)
    if info.me_mapsize - used < max(used, 256 << 20) {
      var size = info.me_mapsize
      while size - used < max(used, 256 << 20) { size *= 2 }
      // No transaction of this environment is open here: the one before is
      // committed and the next not begun.
      try check(mdb_env_set_mapsize(env, size), "mdb_env_set_mapsize")
    }
    var next: OpaquePointer?
    try check(mdb_txn_begin(env, nil, 0, &next), "mdb_txn_begin")
    txn.continuePiecewise(in: next!)
  }

  private enum WriteAttempt<R> {
    case committed(R, wrote: Bool)
    case mapFull
    case mapResized
  }

  /// The id of the last transaction committed, by any process, read from
  /// the meta pages without a transaction. A write that committed nothing
  /// leaves it below its own id (the next writer reuses that id).
  private var lastCommitted: Int {
    var info = MDB_envinfo()
    mdb_env_info(env, &info)
    return info.me_last_txnid
  }

  /// Touches the data file's timestamps: an inotify `IN_ATTRIB` that
  /// followers wait for. LMDB's own last write (the meta page) comes before
  /// its lock file names the new transaction, so a follower woken by that
  /// write alone could look too early and miss the commit.
  private func signalCommit() {
    var fd: Int32 = -1
    guard mdb_env_get_fd(env, &fd) == 0, fd >= 0 else { return }
    futimens(fd, nil)
  }

  /// The device and inode of the data file this environment has open: a
  /// server compares it with what is at the path now, to notice the
  /// directory removed or replaced under it.
  package var dataFileIdentity: FileIdentity? {
    var fd: Int32 = -1
    var status = stat()
    guard mdb_env_get_fd(env, &fd) == 0, fd >= 0, fstat(fd, &status) == 0 else { return nil }
    return FileIdentity(status)
  }

  /// Another process grew the map: adopt its size (with no transaction open here).
  private func adoptResizedMap() throws {
    try resizing { try check(mdb_env_set_mapsize(env, 0), "mdb_env_set_mapsize") }
  }

  /// Writes a consistent copy of the environment to the open file `fd`:
  /// LMDB's own copy (`mdb_env_copyfd2`), of one read transaction, while
  /// writers go on; `compact` leaves out free pages and renumbers the rest.
  /// The copy is not synced (the caller does).
  package func copy(to fd: Int32, compact: Bool) throws {
    while true {
      let rc = sharing { mdb_env_copyfd2(env, fd, compact ? UInt32(MDB_CP_COMPACT) : 0) }
      // Another process grew the map before the copy's read transaction began.
      if rc == LMDBError.mapResized {
        try adoptResizedMap()
        continue
      }
      return try check(rc, "mdb_env_copyfd2")
    }
  }

  /// The unnamed database, whose keys are the names of the named ones.
  package func mainDatabase(in txn: Transaction) throws -> Database { try txn.mainDatabase() }

  /// The bytes the data file should hold by its newest meta page: up to
  /// its last page. A file may be a little shorter and sound (pages
  /// allocated and freed in one transaction are counted, never written).
  package var bytesByMeta: Int {
    var info = MDB_envinfo()
    mdb_env_info(env, &info)
    var stat = MDB_stat()
    mdb_env_stat(env, &stat)
    return (info.me_last_pgno + 1) * Int(stat.ms_psize)
  }

  /// Reads every table through: each key, and each value's first and last
  /// byte (the last page of a value kept in overflow pages). A page the
  /// file does not hold faults here, as the first read of it would later.
  package func readThrough() throws {
    try read { txn in
      let main = try txn.mainDatabase()
      var names: [String] = []
      try txn.withCursor(main) { cursor in
        var entry = try cursor.first()
        while let (key, _) = entry {
          names.append(String(decoding: key, as: UTF8.self))
          entry = try cursor.next()
        }
      }
      var sum: UInt8 = 0
      for name in names {
        guard let table = try txn.openTable(name, create: false) else { continue }
        try txn.withCursor(table) { cursor in
          var entry = try cursor.first()
          while let (key, value) = entry {
            sum &+= key.first ?? 0
            if let first = value.first, let last = value.last { sum &+= first &+ last }
            entry = try cursor.next()
          }
        }
      }
      withExtendedLifetime(sum) {}
    }
  }

  /// Waits until no transaction of this process is opening tables.
  package func waitForTableOpeners() { tableOpening.waitForOpeners() }

  /// A table a committed transaction of this process opened (`Transaction.openTable`).
  package func openedTable(_ name: String) -> Database? { tableOpening.published.withLock { $0[name] } }

  /// Begins a transaction; nil when another process grew the map, which
  /// this one must adopt (outside any transaction) before trying again.
  private func begin(readOnly: Bool) throws -> Transaction? {
    var txn: OpaquePointer?
    let rc = mdb_txn_begin(env, nil, readOnly ? UInt32(MDB_RDONLY) : 0, &txn)
    if rc == LMDBError.mapResized { return nil }
    try check(rc, "mdb_txn_begin")
    return Transaction(txn!, readOnly: readOnly, pageSize: mapPageSize, tableOpening: tableOpening)
  }

  /// A failed commit's or sync's `code` as it is meant: LMDB and a sync
  /// report a short write as `EIO`, which on a file system holding `path`
  /// with less than 1 MiB free is a full disk, and said so (`ENOSPC`).
  static func writeFailure(_ code: Int32, at path: String) -> Int32 {
    guard code == EIO else { return code }
    var stats = statvfs()
    guard statvfs(path, &stats) == 0 else { return code }
    return UInt64(stats.f_bavail) * UInt64(stats.f_frsize) < 1 << 20 ? ENOSPC : code
  }

  /// Grows the map ahead of a large write, so that the write does not run
  /// once per doubling. Only called while `resizing`.
  /// The room every write makes sure of (`write`).
  static let leastRoom = 1 << 20

  /// Whether the map has less room than `makeRoom(for: bytes)` makes.
  private func needsRoom(for bytes: Int) -> Bool {
    var info = MDB_envinfo()
    mdb_env_info(env, &info)
    return (info.me_last_pgno + 1) * pageSize + 2 * bytes > info.me_mapsize
  }

  private func makeRoom(for bytes: Int) throws {
    var info = MDB_envinfo()
    mdb_env_info(env, &info)
    var stat = MDB_stat()
    mdb_env_stat(env, &stat)
    let used = (info.me_last_pgno + 1) * Int(stat.ms_psize)
    // Copy-on-write touches pages twice over, and free pages linger: allow double.
    let needed = used + 2 * bytes
    guard needed > info.me_mapsize else { return }
    var size = info.me_mapsize
    while size < needed { size *= 2 }
    try check(mdb_env_set_mapsize(env, size), "mdb_env_set_mapsize")
  }

  /// Doubles the map. Only called while `resizing`.
  private func grow() throws {
    let size = mapSize
    guard size < Int.max / 2 else { throw LMDBError(LMDBError.mapFull, "mdb_env_set_mapsize") }
    try check(mdb_env_set_mapsize(env, size * 2), "mdb_env_set_mapsize")
  }
}
