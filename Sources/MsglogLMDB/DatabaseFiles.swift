import CLMDB
import MsglogCore

#if canImport(Glibc)
  import Glibc
#endif

/// What is at a database path, found out before LMDB is let near it.
///
/// `mdb_env_open` creates `lock.mdb` in whatever directory it is given, and
/// maps `data.mdb` whole: a file shorter than its own meta page says would
/// fault (SIGBUS) on the first read past its end. So msglog looks first: an
/// unreadable directory, an empty or truncated file, or one that is not LMDB
/// at all is refused with a clear message, and nothing is created.
package enum DatabaseFiles {
  enum Contents: Equatable {
    /// Nothing at the path.
    case missing
    /// A directory with nothing in it (but what `StagingName` names:
    /// databases being built there).
    case emptyDirectory
    /// A directory with a sound-looking `data.mdb`.
    case database
  }

  /// Whether `path` holds a `data.mdb` (without judging it).
  static func exists(_ path: String) -> Bool {
    var info = stat()
    return stat(path + "/data.mdb", &info) == 0
  }

  /// Whether `path` is a directory with nothing in it.
  package static func isEmptyDirectory(_ path: String) -> Bool {
    (try? probe(path, shown: path)) == .emptyDirectory
  }

  static func isDirectory(_ path: String) -> Bool {
    var info = stat()
    return stat(path, &info) == 0 && (info.st_mode & S_IFMT) == S_IFDIR
  }

  /// Looks at `path`; throws a message naming `shown` (the path the user gave)
  /// for anything that cannot hold a msglog database.
  static func probe(_ path: String, shown: String) throws -> Contents {
    var info = stat()
    if stat(path, &info) != 0 {
      if errno == ENOENT { return .missing }
      throw MsglogError.cannotRead(location: shown, reason: systemMessage(errno))
    }
    guard (info.st_mode & S_IFMT) == S_IFDIR else {
      throw MsglogError.notAMsglogDatabase(location: shown, reason: "it is a file, not a directory")
    }
    guard let directory = opendir(path) else {
      throw MsglogError.cannotRead(location: shown, reason: systemMessage(errno))
    }
    var names: [String] = []
    while let entry = readdir(directory) {
      let name = withUnsafeBytes(of: entry.pointee.d_name) { raw in
        String(cString: raw.baseAddress!.assumingMemoryBound(to: CChar.self))
      }
      if name != "." && name != "..", StagingName(inside: name) == nil { names.append(name) }
    }
    closedir(directory)
    if names.isEmpty { return .emptyDirectory }
    guard names.contains("data.mdb") else {
      throw MsglogError.notAMsglogDatabase(location: shown, reason: "the directory holds other files")
    }
    for name in ["data.mdb", "lock.mdb"] { try refuseLink(path + "/" + name, named: name, shown: shown) }
    try checkDataFile(path + "/data.mdb", shown: shown)
    return .database
  }

  /// LMDB opens `data.mdb` and `lock.mdb` by name, following a symbolic
  /// link, and writes the lock file's header as it opens: a link another
  /// user planted in a shared directory would have the caller's msglog
  /// write to whatever it points at (a tester's own file became a lock
  /// file). Neither is ever a link of msglog's making, so one is refused.
  private static func refuseLink(_ file: String, named name: String, shown: String) throws {
    var info = stat()
    guard lstat(file, &info) == 0, (info.st_mode & S_IFMT) == S_IFLNK else { return }
    throw MsglogError.notAMsglogDatabase(
      location: shown, reason: "its \(name) is a symbolic link, which msglog never makes nor follows there")
  }

  /// Why the database at `path` may not use its `lock.mdb`; nil when it
  /// may, or there is none.
  ///
  /// LMDB's lock file holds the mutex every writer takes and the table of
  /// readers: whoever may write it can stall every write for as long as
  /// they like, or free the slot of a reader whose pages a writer then
  /// reuses. Only who may write a directory can make a file in it, so in a
  /// directory only the database's writers may write (its owner's; a
  /// group's, by its bits or an ACL) any lock file is theirs. In one
  /// everyone may write — a sticky shared one — another user can make it
  /// first, between the data file's arrival (a first write moves only
  /// `data.mdb` into place) and the next opening, or after it was removed:
  /// there it must be the data file's owner's or this process's. And none
  /// may be writable by everyone, unless the data file is too (then there
  /// is nothing left to keep).
  static func foreignLockFile(in path: String) -> ForeignLockFile? {
    var lock = stat()
    var data = stat()
    var directory = stat()
    guard lstat(path + "/lock.mdb", &lock) == 0, stat(path + "/data.mdb", &data) == 0, stat(path, &directory) == 0
    else { return nil }
    if data.st_mode & S_IWOTH != 0 { return nil }
    if lock.st_mode & S_IWOTH != 0 { return .writableByEveryone(inUseBy: lockHolder(path)) }
    guard directory.st_mode & S_IWOTH != 0, lock.st_uid != data.st_uid, lock.st_uid != geteuid() else { return nil }
    return .anotherUsers(lock.st_uid, inUseBy: lockHolder(path))
  }

  /// A lock file the database may not use (`foreignLockFile`), and the
  /// process that has the database open with it now, if any (LMDB holds a
  /// shared lock on its byte 0 for as long as the environment is open).
  enum ForeignLockFile: Equatable {
    case writableByEveryone(inUseBy: pid_t?)
    case anotherUsers(uid_t, inUseBy: pid_t?)

    /// Why a writer refuses it, and what to do.
    var reason: String {
      switch self {
      case .writableByEveryone(let holder):
        return "its lock.mdb may be written by every user, and whoever may write it can stall every write; "
          + (holder.map { "stop process \($0), which has it open, then " } ?? "")
          + "remove the file, and msglog makes its own"
      case .anotherUsers(let uid, let holder):
        return "its lock.mdb was made by another user (uid \(uid)) in a directory everyone may write, "
          + "and whoever may write it can stall every write; "
          + (holder.map { "stop process \($0), which has it open, then " } ?? "")
          + "remove the file, and msglog makes its own"
      }
    }
  }

  /// Takes from the database's own `lock.mdb` the read bits of whoever may
  /// not write it. Nobody needs them (who may not write the lock file reads
  /// without it), and with them another user could take a byte-range lock
  /// on it from a read-only descriptor where LMDB takes each reader's own,
  /// and make every command fail ("resource temporarily unavailable"). A
  /// database made in a readable directory (`mkdir -m 755`) has its files
  /// made readable.
  ///
  /// One root made (an administrator's command on a user's database, as
  /// its first opening since its data file arrived) is given to the data
  /// file's owner: root's, its owner could no longer write the database.
  static func narrowLockFile(in path: String) {
    var lock = stat()
    var data = stat()
    guard lstat(path + "/lock.mdb", &lock) == 0, (lock.st_mode & S_IFMT) == S_IFREG, lock.st_uid == geteuid() else {
      return
    }
    if lock.st_uid == 0, stat(path + "/data.mdb", &data) == 0, data.st_uid != 0 {
      // With the data file's owner's and group's bits: root's umask is not theirs (a group's writers were refused).
      _ = lchown(path + "/lock.mdb", data.st_uid, data.st_gid)
      _ = chmod(path + "/lock.mdb", data.st_mode & 0o660)
      return
    }
    var readers: mode_t = S_IROTH
    if lock.st_mode & S_IWGRP == 0 { readers |= S_IRGRP }
    guard lock.st_mode & readers != 0 else { return }
    _ = chmod(path + "/lock.mdb", lock.st_mode & 0o7777 & ~readers)
  }

  /// The process holding LMDB's shared lock on `lock.mdb` in `path`: one
  /// with the database open through that file (removed then, the file
  /// would leave two processes with two lock files).
  static func lockHolder(_ path: String) -> pid_t? {
    let fd = open(path + "/lock.mdb", O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC)
    guard fd >= 0 else { return nil }
    defer { close(fd) }
    var probe = flock()
    probe.l_type = Int16(F_WRLCK)
    probe.l_whence = Int16(SEEK_SET)
    probe.l_start = 0
    probe.l_len = 1
    guard fcntl(fd, F_GETLK, &probe) == 0, probe.l_type != Int16(F_UNLCK) else { return nil }
    return probe.l_pid
  }

  /// Checks that `data.mdb` starts with LMDB's meta pages and is as long as they say.
  ///
  /// Other processes may be writing to it meanwhile: the file's size is
  /// taken after the meta pages are read. A writer grows the file before it
  /// writes the meta page that names the new pages, and nothing shrinks
  /// it, so a size taken later covers every page a meta read earlier
  /// names. Taken first, a commit in between made a healthy file look cut
  /// short (a CI run of four writers at once had one refused).
  /// `midway` runs between the two looks (tests: a writer commits there).
  static func checkDataFile(_ file: String, shown: String, midway: () -> Void = {}) throws {
    let fd = open(file, O_RDONLY | O_CLOEXEC)
    guard fd >= 0 else { throw MsglogError.cannotRead(location: shown + "/data.mdb", reason: systemMessage(errno)) }
    defer { close(fd) }
    func size() throws -> Int {
      var info = stat()
      guard fstat(fd, &info) == 0 else {
        throw MsglogError.cannotRead(location: shown + "/data.mdb", reason: systemMessage(errno))
      }
      return Int(info.st_size)
    }
    func notLMDB(_ why: String) -> MsglogError {
      MsglogError.notAMsglogDatabase(location: shown, reason: "its data.mdb \(why)")
    }
    guard let first = MetaPage.read(fd, at: 0) else {
      let size = try size()
      guard size > 0 else { throw notLMDB("is empty") }
      throw notLMDB(size < 4096 ? "is truncated (\(size) bytes)" : "is not an LMDB file")
    }
    let pageSize = first.pageSize
    guard pageSize >= 512, pageSize <= 1 << 16, pageSize & (pageSize - 1) == 0 else {
      throw notLMDB("has an impossible page size (\(pageSize))")
    }
    guard let second = MetaPage.read(fd, at: pageSize) else { throw notLMDB("is truncated (\(try size()) bytes)") }
    midway()
    let size = try size()
    // The newer meta page names the roots every read starts from; LMDB
    // writes them (and syncs) before the meta page, so even with a writer
    // at work they lie inside the file — unless it was cut short. (The
    // meta's last page number may lie past the end: pages allocated and
    // freed in one transaction are counted but never written.)
    let current = second.transaction > first.transaction ? second : first
    for root in [current.freeListRoot, current.mainRoot].compactMap({ $0 }) {
      let end = (root + 1).multipliedReportingOverflow(by: UInt64(pageSize))
      guard !end.overflow, UInt64(size) >= end.partialValue else {
        throw notLMDB("is truncated (\(size) bytes; its root page \(root) lies past the end)")
      }
    }
  }

  /// Puts a database built in `staging` at `path`, where every reader sees
  /// it whole or not at all, and never over what another process put there
  /// first: when nothing is at `path`, the staging directory is renamed to
  /// it; into an empty directory (which keeps its inode, owner, mode,
  /// set-group-id bit and mount) the data file alone is moved — the one
  /// file that makes it a database, whole since its commit was synced. The
  /// new names are synced, and what is left of `staging` is removed.
  ///
  /// Returns false, changing nothing, when a database got there first (a
  /// first write then writes into that one).
  ///
  /// LMDB's lock file is not moved: the first process to open an
  /// environment nobody has open sets its lock file up afresh, and one
  /// moved in after the data file could replace the lock file a reader had
  /// just made beside it, leaving the two with different locks.
  package static func install(_ staging: String, at path: String) throws -> Bool {
    let path = trimmed(path)
    switch try probe(path, shown: path) {
    case .database:
      return false
    case .missing:
      if renameWithoutReplacing(staging, path) {
        syncDirectory(parent(of: path))
        return true
      }
      guard errno == EEXIST || errno == ENOTEMPTY else {
        throw MsglogError.cannotCreate(location: path, reason: systemMessage(errno))
      }
      // Made meanwhile by someone else: a database, or an empty directory to move into.
      guard try probe(path, shown: path) == .emptyDirectory else { return false }
    case .emptyDirectory:
      break
    }
    let data = staging + "/data.mdb"
    takeGroup(of: path, for: data)
    guard renameWithoutReplacing(data, path + "/data.mdb") else {
      if errno == EEXIST { return false }
      throw MsglogError.cannotCreate(location: path, reason: systemMessage(errno))
    }
    syncDirectory(path)
    removeStaging(staging)
    return true
  }

  /// rename(2) that fails with EEXIST rather than replace what is at `to`
  /// (renameat2's RENAME_NOREPLACE). Where the file system cannot do that,
  /// a file is hard-linked then unlinked (link(2) never replaces either),
  /// and a directory renamed (which replaces only an empty directory).
  static func renameWithoutReplacing(_ from: String, _ to: String) -> Bool {
    if msglog_rename_noreplace(from, to) == 0 { return true }
    guard errno == EINVAL || errno == ENOSYS else { return false }
    if isDirectory(from) { return rename(from, to) == 0 }
    guard link(from, to) == 0 else { return false }
    unlink(from)
    return true
  }

  /// A data file built elsewhere, moved into a set-group-id directory,
  /// gets the group a file made there would have had (best effort: the
  /// owner may only give a file a group of their own).
  static func takeGroup(of directory: String, for file: String) {
    var info = stat()
    var fileInfo = stat()
    guard stat(directory, &info) == 0, info.st_mode & S_ISGID != 0, stat(file, &fileInfo) == 0,
      fileInfo.st_gid != info.st_gid
    else { return }
    _ = chown(file, uid_t.max, info.st_gid)
  }

  /// The permission bits for the files LMDB makes in `directory`: its own
  /// read and write bits (a group-shared directory gets a group-shared
  /// database; a new one, owner-only, gets owner-only files), less the umask.
  static func fileMode(in directory: String) -> mode_t {
    var info = stat()
    guard stat(directory, &info) == 0 else { return 0o600 }
    return info.st_mode & 0o666
  }

  /// The mode LMDB makes its missing files with in the database at
  /// `directory`: the directory's bits (`fileMode`) for a new database's;
  /// beside an existing data file — only the lock file is missing — without
  /// the read bits of whoever may not write it (`narrowLockFile`), from its
  /// making on: taken away after it, another user had a moment to open it.
  static func modeForLMDBsFiles(in directory: String) -> mode_t {
    let mode = fileMode(in: directory)
    guard exists(directory) else { return mode }
    return mode & ~(S_IROTH | (mode & S_IWGRP == 0 ? S_IRGRP : 0))
  }

  /// `path` without trailing slashes (`shared/` is the directory `shared`).
  package static func trimmed(_ path: String) -> String {
    var path = Substring(path)
    while path.count > 1, path.hasSuffix("/") { path = path.dropLast() }
    return String(path)
  }

  /// The directory that holds `path`.
  package static func parent(of path: String) -> String {
    let path = trimmed(path)
    guard let slash = path.lastIndex(of: "/") else { return "." }
    let parent = String(path[..<slash])
    return parent.isEmpty ? "/" : parent
  }

  /// Whether `path` is `directory` or lies inside it, once both are
  /// resolved (links, `..`); false when either cannot be.
  static func isWithin(_ path: String, directory: String) -> Bool {
    func resolved(_ path: String) -> String? {
      guard let real = realpath(path, nil) else { return nil }
      defer { free(real) }
      return String(cString: real)
    }
    guard let inner = resolved(path), let outer = resolved(directory) else { return false }
    return inner == outer || inner.hasPrefix(outer == "/" ? "/" : outer + "/")
  }

  /// The data file of the database in `directory`, opened to be synced
  /// later (`syncData`); the caller closes it.
  static func openData(of directory: String) throws -> Int32 {
    let fd = open(directory + "/data.mdb", O_RDONLY | O_CLOEXEC)
    guard fd >= 0 else { throw LMDBError(errno, "open") }
    return fd
  }

  /// Makes every page written to the data file `fd` durable (`fdatasync`,
  /// as LMDB's own sync), and its name in `directory`, which is renamed
  /// next. A descriptor opened before the pages were written is told of
  /// any the disk failed to write, whichever descriptor wrote them.
  static func syncData(_ fd: Int32, in directory: String) throws {
    guard fdatasync(fd) == 0 else { throw LMDBError(Environment.writeFailure(errno, at: directory), "fdatasync") }
    syncDirectory(directory)
  }

  /// Makes the names in a directory durable.
  static func syncDirectory(_ directory: String) {
    let fd = open(directory, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
    guard fd >= 0 else { return }
    fsync(fd)
    close(fd)
  }
}
