import CLMDB
import MsglogCore

#if canImport(Glibc)
  import Glibc
#endif

/// A data file cut short behind msglog's back (truncated by hand, copied
/// in part, a disk that lost its tail) whose roots still lie inside it, so
/// that the checks at opening (`DatabaseFiles.probe`) pass.
///
/// A read of a page it lacks faults (SIGBUS, the command line's one line),
/// or finds zeros in the last, partial page, which LMDB reads as keys of 0
/// bytes. Worse, a write touches only the pages on its path and then
/// lengthens the file with its own: it went through, and the lost pages in
/// between became holes of zeros that the file's length no longer gives
/// away. So a write checks the file before it changes anything, and
/// `verify` says what it finds. (Reads go on: an `export` of a file cut
/// short saves the events before the first page lost.)
///
/// A sound file may be shorter than its last page too: pages allocated
/// and freed in one transaction are counted by the meta page and never
/// written. Such pages are on the free list; a page the file lacks that is
/// not is a page lost. The free list is read from the file, not the map
/// (`FreeListFile`): its own pages may be the ones lost.
extension Environment {
  /// The meta page of the commit `id`; nil when neither meta page is
  /// that commit's any more.
  private func meta(of id: Int, fd: Int32) -> MetaPage? {
    [0, pageSize].lazy.compactMap { MetaPage.read(fd, at: $0) }.first { $0.transaction == UInt64(id) }
  }

  /// The data file's lack of a page the commit `id` uses: nil when it has
  /// them all, and when it cannot tell (its length unread, or `id` not the
  /// commit a meta page names: a newer came first, and a file only grows).
  /// A free list that makes no sense is damage (`.damagedPages`).
  ///
  /// The commit's pages must stay as they are while the free list is read:
  /// call it holding the writer lock, or in a read transaction of `id`
  /// (its reader slot keeps writers off them; without one, on a database
  /// read-only to us, a commit meanwhile makes it answer nil).
  package func lengthShortfall(ofCommit id: Int) throws -> LMDBFailure? {
    var fd: Int32 = -1
    var file = stat()
    guard mdb_env_get_fd(env, &fd) == 0, fd >= 0, fstat(fd, &file) == 0 else { return nil }
    let held = Int(file.st_size) / pageSize
    // The newest meta page's last page is at least `id`'s: a file that
    // holds it (nearly always) holds `id`'s too, without reading a meta page.
    var info = MDB_envinfo()
    mdb_env_info(env, &info)
    guard held <= info.me_last_pgno, let meta = meta(of: id, fd: fd), UInt64(held) <= meta.lastPage else { return nil }
    let lastPage = Int(truncatingIfNeeded: meta.lastPage)
    let missing = held...lastPage
    func cutShort(_ page: Int) -> LMDBFailure {
      .fileCutShort(bytes: UInt64(file.st_size), lostPage: UInt64(page), pageSize: UInt64(pageSize))
    }
    var free = Set<Int>()
    let shortfall: Result<LMDBFailure?, LMDBError>
    do {
      if let root = meta.freeListRoot {
        let list = FreeListFile(fd: fd, pageSize: pageSize, heldPages: held, lastPage: lastPage)
        try list.forEachFreePage(root: Int(truncatingIfNeeded: root)) { page in
          if missing.contains(page) { free.insert(page) }
          return free.count < missing.count
        }
      }
      shortfall = .success(missing.first { !free.contains($0) }.map(cutShort))
    } catch FreeListFile.Unreadable.lost(let page) {
      shortfall = .success(cutShort(page))
    } catch FreeListFile.Unreadable.failed(let code) {
      shortfall = .failure(LMDBError(code, "pread"))
    } catch {
      shortfall = .failure(LMDBError(LMDBError.corrupted, "the free list"))
    }
    // Without a reader slot nothing kept a writer elsewhere from reusing
    // the pages read: what a commit meanwhile may have changed proves nothing.
    if isLockless, lastCommittedTransaction != id { return nil }
    return try shortfall.get()
  }

  /// `lengthShortfall(ofCommit:)` of the commit the read transaction
  /// `txn` sees, whose reader slot keeps writers off its pages.
  func lengthShortfall(readIn txn: Transaction) throws -> LMDBFailure? {
    try lengthShortfall(ofCommit: Int(mdb_txn_id(txn.handle)))
  }

  /// Throws `fileCutShort` when the data file lacks a page the last commit
  /// uses: for a write, before it changes anything, under the writer lock
  /// (so the last commit is the newest, and nobody reuses its pages).
  func checkLengthBeforeWriting() throws {
    if let failure = try lengthShortfall(ofCommit: lastCommittedTransaction) {
      throw MsglogError.lmdbFailure(failure)
    }
  }
}
