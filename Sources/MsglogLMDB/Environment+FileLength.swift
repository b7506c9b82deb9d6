import CLMDB
import MsglogCore

#if canImport(Glibc)
  import Glibc
#endif

/// A data file cut short behind msglog's back (truncated by hand, copied
/// in part, a disk that lost its tail) whose roots still lie inside it, so
/// that the checks at opening (`DatabaseFiles.probe`) pass.
///
/// A read of a page it lacks faults (SIGBUS), or finds zeros in the last,
/// partial page, which LMDB reads as keys of 0 bytes. Worse, a write
/// touches only the pages on its path and then lengthens the file with its
/// own: it went through, and the lost pages in between became holes of
/// zeros that the file's length no longer gives away. So a write checks
/// the file before it changes anything, and a reader when it opens.
///
/// A sound file may be shorter than its last page too: pages allocated
/// and freed in one transaction are counted by the meta page and never
/// written. Such pages are on the free list; a page the file lacks that is
/// not is a page lost.
extension Environment {
  /// The pages the data file does not hold whole, up to `lastPage`: nil
  /// when it holds them all (or its length cannot be read: no proof).
  private func pagesPastTheEnd(lastPage: Int) -> (missing: ClosedRange<Int>, fileBytes: Int)? {
    var fd: Int32 = -1
    var file = stat()
    guard mdb_env_get_fd(env, &fd) == 0, fd >= 0, fstat(fd, &file) == 0 else { return nil }
    let held = Int(file.st_size) / pageSize
    return held <= lastPage ? (held...lastPage, Int(file.st_size)) : nil
  }

  /// Throws `fileCutShort` when the data file lacks a page the commit that
  /// `txn` (a read) sees may use. Checks nothing when a newer commit came
  /// first: the meta page read would not be of `txn`'s commit, whose free
  /// list is the one read here (and a file only grows).
  func checkLength(reading txn: Transaction) throws {
    var info = MDB_envinfo()
    mdb_env_info(env, &info)
    guard info.me_last_txnid == mdb_txn_id(txn.handle),
      let (missing, fileBytes) = pagesPastTheEnd(lastPage: info.me_last_pgno)
    else { return }
    var free = Set<Int>()
    let lost: Int?
    if let root = freeListRoot(of: UInt64(info.me_last_txnid)), missing.contains(root) {
      lost = nil  // not read: a page the file lacks whole would fault
    } else {
      do {
        try txn.forEachFreePage { page, _ in
          if missing.contains(page) { free.insert(page) }
        }
        guard let page = missing.first(where: { !free.contains($0) }) else { return }
        lost = page
      } catch is LMDBError {
        // A page of the free list below its root lies past the end, read as
        // zeros in the last, partial page. (One the file lacks whole faults
        // here as any read of it would: SIGBUS, the command line's one line.)
        lost = nil
      }
    }
    throw MsglogError.lmdbFailure(
      .fileCutShort(bytes: UInt64(fileBytes), lostPage: lost.map(UInt64.init), pageSize: UInt64(pageSize)))
  }

  /// The root page of the free list as the meta page of the commit `id`
  /// names it (LMDB's `MDB_meta`: the free list's root at byte 80 of the
  /// page, the transaction id at 144); nil when neither meta page is that
  /// commit's any more.
  private func freeListRoot(of id: UInt64) -> Int? {
    var fd: Int32 = -1
    guard mdb_env_get_fd(env, &fd) == 0, fd >= 0 else { return nil }
    for offset in [0, pageSize] {
      var meta = (root: UInt64(0), txnid: UInt64(0))
      guard pread(fd, &meta.root, 8, off_t(offset + 80)) == 8, pread(fd, &meta.txnid, 8, off_t(offset + 144)) == 8
      else { continue }
      if meta.txnid == id { return meta.root == UInt64.max ? nil : Int(truncatingIfNeeded: meta.root) }
    }
    return nil
  }

  /// `checkLength` for a write, before it changes anything: under the
  /// writer lock, so the last commit is the newest. The free list is read
  /// in a read transaction (LMDB opens it to no other) only when the file
  /// is shorter than the last page, which is rare.
  func checkLengthBeforeWriting() throws {
    var info = MDB_envinfo()
    mdb_env_info(env, &info)
    guard pagesPastTheEnd(lastPage: info.me_last_pgno) != nil else { return }
    var handle: OpaquePointer?
    try check(mdb_txn_begin(env, nil, UInt32(MDB_RDONLY), &handle), "mdb_txn_begin")
    let reading = Transaction(handle!, readOnly: true, pageSize: mapPageSize)
    defer {
      mdb_txn_abort(handle)
      reading.invalidate()
    }
    try checkLength(reading: reading)
  }
}

extension Transaction {
  /// Every page on LMDB's free list, with the transaction that freed it.
  /// Only a read transaction may open the free list (LMDB's `FREE_DBI`,
  /// slot 0): its keys are transaction ids, its values a count of pages
  /// and then their numbers, 8 bytes each.
  func forEachFreePage(_ body: (_ page: Int, _ freedIn: UInt64) throws -> Void) throws {
    precondition(isReadOnly, "LMDB opens its free list to a read transaction only")
    try withCursor(Database(dbi: 0)) { cursor in
      var entry = try cursor.first()
      while let (key, value) = entry {
        guard key.count == 8, value.count >= 8 else { throw LMDBError(LMDBError.corrupted, "the free list") }
        let freedIn = key.loadUnaligned(as: UInt64.self)
        let count = Int(truncatingIfNeeded: value.loadUnaligned(as: UInt64.self))
        guard count >= 0, count < value.count / 8 else { throw LMDBError(LMDBError.corrupted, "the free list") }
        for i in stride(from: 1, through: count, by: 1) {
          try body(Int(truncatingIfNeeded: value.loadUnaligned(fromByteOffset: i * 8, as: UInt64.self)), freedIn)
        }
        entry = try cursor.next()
      }
    }
  }
}
