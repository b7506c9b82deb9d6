import CLMDB

#if canImport(Glibc)
  import Glibc
#endif

/// An open LMDB environment (one database directory).
///
/// Transactions are lent to closures: `write` commits when its closure
/// returns and aborts when it throws, and the first error wins. A write that
/// fills the map is rolled back, the map doubled, and the closure run again
/// from the start, so users never see `MDB_MAP_FULL`.
public final class Environment {
  let env: OpaquePointer
  public let path: String
  public let isReadOnly: Bool
  /// Opened without the lock file (`MDB_NOLOCK`): no reader slot protects a
  /// read from a concurrent writer, so readers must check
  /// `lastCommittedTransaction` before and after.
  public let isLockless: Bool

  /// Opens (or, for a writer, creates the files of) the environment in the
  /// directory `path`, which must exist.
  ///
  /// - Parameters:
  ///   - mapSize: the map size for a new environment; an existing one keeps
  ///     at least the size it has.
  ///   - mode: permission bits for the files LMDB creates.
  public init(
    path: String, readOnly: Bool, lockless: Bool = false, maxDatabases: UInt32, mapSize: Int, mode: mode_t = 0o600
  ) throws {
    precondition(readOnly || !lockless, "only a reader may go without the lock file")
    var env: OpaquePointer?
    try check(mdb_env_create(&env), "mdb_env_create")
    // From here every failure must close the handle before throwing.
    do {
      try check(mdb_env_set_maxdbs(env, maxDatabases), "mdb_env_set_maxdbs")
      try check(mdb_env_set_mapsize(env, mapSize), "mdb_env_set_mapsize")
      // MDB_NOTLS: reader slots belong to transactions, not threads, so a
      // process can run several read transactions over its life safely.
      let flags = UInt32(MDB_NOTLS) | (readOnly ? UInt32(MDB_RDONLY) : 0) | (lockless ? UInt32(MDB_NOLOCK) : 0)
      try check(mdb_env_open(env, path, flags, mode), "mdb_env_open")
      if !lockless {
        // Free reader slots left behind by processes that died holding them.
        var dead: Int32 = 0
        try check(mdb_reader_check(env, &dead), "mdb_reader_check")
      }
    } catch {
      mdb_env_close(env)
      throw error
    }
    self.env = env!
    self.path = path
    self.isReadOnly = readOnly
    self.isLockless = lockless
  }

  /// The id of the last committed write transaction, from the meta page.
  public var lastCommittedTransaction: Int {
    var info = MDB_envinfo()
    mdb_env_info(env, &info)
    return info.me_last_txnid
  }

  deinit { mdb_env_close(env) }

  /// The current map size in bytes.
  public var mapSize: Int {
    var info = MDB_envinfo()
    mdb_env_info(env, &info)
    return info.me_mapsize
  }

  /// Runs `body` in a read-only transaction.
  public func read<R>(_ body: (Transaction) throws -> R) throws -> R {
    let txn = try begin(readOnly: true)
    defer { txn.invalidate() }
    let result: R
    do {
      result = try body(txn)
    } catch {
      mdb_txn_abort(txn.handle)
      throw error
    }
    // Commit rather than abort: database handles opened in this transaction
    // survive a commit, but an abort closes them.
    try check(mdb_txn_commit(txn.handle), "mdb_txn_commit")
    return result
  }

  /// Runs `body` in a write transaction and commits it (durably) when it returns.
  ///
  /// `body` may run more than once: after a full map, everything it did is
  /// rolled back and it starts again on a bigger map.
  public func write<R>(reserving bytes: Int = 0, _ body: (Transaction) throws -> R) throws -> R {
    precondition(!isReadOnly, "write on a read-only environment")
    if bytes > 0 { try makeRoom(for: bytes) }
    while true {
      let txn = try begin(readOnly: false)
      let result: R
      do {
        result = try body(txn)
      } catch let error as LMDBError where error.code == LMDBError.mapFull {
        mdb_txn_abort(txn.handle)
        txn.invalidate()
        try grow()
        continue
      } catch {
        mdb_txn_abort(txn.handle)
        txn.invalidate()
        throw error
      }
      // mdb_txn_commit frees the transaction even when it fails: never abort after it.
      let rc = mdb_txn_commit(txn.handle)
      txn.invalidate()
      if rc == LMDBError.mapFull {
        try grow()
        continue
      }
      if rc == EIO, isDiskNearlyFull {
        // LMDB reports a short write as EIO; on a full disk, say what it is.
        throw LMDBError(ENOSPC, "mdb_txn_commit")
      }
      try check(rc, "mdb_txn_commit")
      return result
    }
  }

  /// The unnamed database, whose keys are the names of the named ones.
  public func mainDatabase(in txn: Transaction) throws -> Database {
    var dbi: MDB_dbi = 0
    try check(mdb_dbi_open(txn.handle, nil, 0, &dbi), "mdb_dbi_open")
    return Database(dbi: dbi)
  }

  /// Opens (and, in a writer, creates) a named database.
  public func openDatabase(_ name: String, create: Bool, in txn: Transaction) throws -> Database? {
    var dbi: MDB_dbi = 0
    let rc = mdb_dbi_open(txn.handle, name, create ? UInt32(MDB_CREATE) : 0, &dbi)
    if rc == LMDBError.notFound { return nil }
    try check(rc, "mdb_dbi_open")
    return Database(dbi: dbi)
  }

  private func begin(readOnly: Bool) throws -> Transaction {
    while true {
      var txn: OpaquePointer?
      let rc = mdb_txn_begin(env, nil, readOnly ? UInt32(MDB_RDONLY) : 0, &txn)
      if rc == LMDBError.mapResized {
        // Another process grew the map: adopt its size and try again.
        try check(mdb_env_set_mapsize(env, 0), "mdb_env_set_mapsize")
        continue
      }
      try check(rc, "mdb_txn_begin")
      return Transaction(txn!, readOnly: readOnly)
    }
  }

  /// Whether the file system holding the database has less than 1 MiB free.
  private var isDiskNearlyFull: Bool {
    var stats = statvfs()
    guard statvfs(path, &stats) == 0 else { return false }
    return UInt64(stats.f_bavail) * UInt64(stats.f_frsize) < 1 << 20
  }

  /// Grows the map ahead of a large write, so that the write does not run
  /// once per doubling. Only called with no transaction open in this process.
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

  /// Doubles the map. Only called with no transaction open in this process.
  private func grow() throws {
    let size = mapSize
    guard size < Int.max / 2 else { throw LMDBError(LMDBError.mapFull, "mdb_env_set_mapsize") }
    try check(mdb_env_set_mapsize(env, size * 2), "mdb_env_set_mapsize")
  }
}
