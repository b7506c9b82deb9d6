import MsglogCore

#if canImport(Glibc)
  import Glibc
#endif

extension LMDBStore {
  /// Copies the live database to `destination`, which must not exist,
  /// while writers go on: LMDB's own copy of one read transaction
  /// (`compact` leaves out free pages), written under a staging name beside
  /// `destination`, synced, and renamed to it only when whole — a backup
  /// killed midway leaves nothing at `destination`.
  ///
  /// Which seq the copy holds: LMDB's copy takes its read transaction
  /// itself, so no read of ours shares its snapshot. The copy is that
  /// snapshot, though: opened (nobody else can see it yet) and read, its
  /// head is by construction the seq it holds, and its events table the
  /// events it holds.
  package func copy(to destination: String, compact: Bool) throws -> StoreCopy? {
    guard let store = try tables(creating: false) else {
      throw MsglogError.noDatabase(location: path, store: .lmdb, emptyDirectory: false)
    }
    let shown = destination
    let destination = DatabaseFiles.trimmed(destination)
    var info = stat()
    guard lstat(destination, &info) != 0, errno == ENOENT else {
      throw MsglogError.cannotBackUp(location: shown, why: .exists)
    }
    // A copy inside the database's directory would be a file of the
    // database it copies (and its staging directory swept as one).
    if DatabaseFiles.isWithin(DatabaseFiles.parent(of: destination), directory: path) {
      throw MsglogError.cannotBackUp(location: shown, why: .insideDatabase)
    }
    // A source cut short (`Environment.lengthShortfall`) is refused
    // before anything is made: LMDB would copy it as long as it is, or
    // fault on a page it lacks. (In a read transaction, whose reader slot
    // keeps writers off the free list's pages while they are read.)
    let shortfall = try store.environment.read { try store.environment.lengthShortfall(readIn: $0) }
    if let shortfall { throw MsglogError.lmdbFailure(shortfall) }
    DatabaseFiles.sweepStaging(for: destination)
    let made: StagingDirectory?
    do {
      made = try StagingDirectory.make(for: destination, purpose: .backup, shown: shown)
    } catch MsglogError.cannotCreate(_, let reason) {
      // Said as the backup's, not as a database's to create.
      throw MsglogError.cannotBackUp(location: shown, why: .cannotCreate(reason))
    }
    guard let staging = made else { throw MsglogError.cannotBackUp(location: shown, why: .exists) }
    let file = staging.path + "/data.mdb"
    let fd = open(file, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
    guard fd >= 0 else { throw failure(errno, shown) }
    var closed = false
    defer { if !closed { close(fd) } }
    // A database read-only to us is read without a reader slot: a commit
    // during the copy may have reused pages it was copying, so a copy that
    // saw one is made again.
    var attempt = 0
    while true {
      let before = store.lastCommit
      try store.environment.copy(to: fd, compact: compact)
      if !store.isLockless || store.lastCommit == before { break }
      attempt += 1
      guard attempt < 5 else { throw MsglogError.changedDuringRead(location: path) }
      guard ftruncate(fd, 0) == 0, lseek(fd, 0, SEEK_SET) == 0 else { throw failure(errno, shown) }
    }
    guard fsync(fd) == 0 else { throw failure(errno, shown) }
    closed = true
    guard close(fd) == 0 else { throw failure(errno, shown) }
    // LMDB copies the file as long as it is: a source cut short (damage
    // the checks at opening cannot always see) gives a copy cut short,
    // reported as copied (a crash-safety tester's backup said so, exit 0,
    // of a file verify calls truncated). A copy shorter than its own meta
    // page says is read through, so that a page it lacks faults now
    // (SIGBUS: the command line's message, exit 1), not at its first use —
    // before the purge, whose writes of free pages could lengthen the file
    // with zeros where the missing pages were (a CI run's LMDB assertion).
    var written = stat()
    guard stat(file, &written) == 0 else { throw failure(errno, shown) }
    try {
      let copy = try LMDBTables(path: staging.path, create: false, shown: shown, lockless: true)
      if Int(written.st_size) < copy.environment.bytesByMeta { try copy.environment.readThrough() }
    }()
    try Self.purge(copyAt: staging.path)
    var copied = stat()
    guard stat(file, &copied) == 0 else { throw failure(errno, shown) }
    // Closed when this scope ends, before the rename.
    let counted: (events: UInt64, seq: UInt64) = try {
      let copy = try LMDBTables(path: staging.path, create: false, shown: shown, lockless: true)
      return try copy.environment.read { txn in
        (try txn.entries(copy.events), try LMDBTables.LogTransaction(tables: copy, txn: txn).headSeq())
      }
    }()
    DatabaseFiles.syncDirectory(staging.path)
    guard DatabaseFiles.renameWithoutReplacing(staging.path, destination) else {
      if errno == EEXIST || errno == ENOTEMPTY {
        throw MsglogError.cannotBackUp(location: shown, why: .appeared)
      }
      throw failure(errno, shown)
    }
    DatabaseFiles.syncDirectory(DatabaseFiles.parent(of: destination))
    return StoreCopy(events: counted.events, seq: counted.seq, bytes: UInt64(copied.st_size))
  }

  /// The copy is purged before it is DEST: LMDB's copy takes pages as
  /// they are — the free ones too, unless compacting, and every page's
  /// unused middle — and an erased or trimmed text lies there until the
  /// source's own `purge`, while a backup made after an erase must hold
  /// none (docs/REFERENCE.md, "Forgetting on purpose"). Nobody else has the
  /// copy open, so nothing holds the purge up; the lock file it makes goes.
  private static func purge(copyAt path: String) throws {
    do {
      let copy = LMDBStore(path: path)
      _ = try copy.purge(waiting: { _ in })
    }
    unlink(path + "/lock.mdb")
  }

  private func failure(_ code: Int32, _ destination: String) -> MsglogError {
    code == ENOSPC || code == EDQUOT
      ? .diskFull(store: .lmdb, detail: "the backup did not fit at \(destination)")
      : .cannotCreate(location: destination, reason: systemMessage(code))
  }
}
