import CLMDB
import MsglogCore

#if canImport(Glibc)
  import Glibc
#endif

/// Step 2 of `purge` (`LMDBStore+Purge`): the free pages no snapshot can
/// see, overwritten with zeros straight in the data file.
///
/// Why writing to the file behind LMDB's back is safe here:
/// - It runs inside a write transaction that has not changed anything yet,
///   so no other writer runs (LMDB's writer lock), and this one's free list
///   is the committed one: every page in it is in no tree of the last
///   commit, and the next writer to reuse one writes it whole first.
/// - It takes only the pages LMDB itself would hand to this transaction
///   (`mdb_page_alloc`): those freed by a transaction older than every
///   reader's snapshot and than the last commit (`mdb_find_oldest`; LMDB
///   keeps the last commit's freed pages: the meta page before it, which a
///   crash may fall back to, still names them). No reader can reach them,
///   and one that starts now reads the last commit. LMDB overwrites
///   exactly these pages with `pwrite` (no writable map here) while
///   readers read; zeros are one more such write. (A reader without a
///   reader slot, on a database it may not write, is not seen, as it is
///   not by any writer: `LMDBStore.read` reads again what looks damaged.)
/// - Nothing is committed: a `kill -9` leaves the database as its last
///   commit left it, some free pages zeroed, and a rerun does the rest.
/// A page that already reads all zeros (scrubbed before and not reused
/// since) is not written again.
extension LMDBStore {
  /// Zeroes, on disk, every free page no reader's snapshot can see.
  /// - Parameter freedBy: the purge's own rewrite: whether pages it or an
  ///   earlier transaction freed are still held by a reader is returned.
  /// - Returns: the bytes written, and whether a reader held such pages.
  /// - Parameter scanGaps: also zero the unused middle of every page in
  ///   use (`dirtyGaps`), read in the file as this transaction sees it.
  /// - Parameter syncing: sync the zeros before returning (a new database,
  ///   synced whole before it is put in place, leaves it to its caller).
  static func scrubFreePages(
    in txn: Transaction, of environment: Environment, freedBy: UInt64, scanGaps: Bool, syncing: Bool = true
  ) throws -> (bytes: UInt64, held: Bool) {
    let env = environment.env
    let pageSize = environment.pageSize
    let oldest = try oldestSnapshot(of: env, writing: UInt64(mdb_txn_id(txn.handle)))
    var pages: [Int] = []
    // Every free page, held by a reader or not: no page of a tree.
    var free: [Int] = []
    var held = false
    // LMDB lets only a read transaction open its free list: one begun now,
    // while this write holds the writer lock, reads this write's start.
    var handle: OpaquePointer?
    try check(mdb_txn_begin(env, nil, UInt32(MDB_RDONLY), &handle), "mdb_txn_begin")
    let reading = Transaction(handle!, readOnly: true, pageSize: environment.mapPageSize)
    defer {
      mdb_txn_abort(handle)
      reading.invalidate()
    }
    try reading.forEachFreePage { page, freedIn in
      free.append(page)
      if freedIn < oldest { pages.append(page) } else if freedIn <= freedBy { held = true }
    }
    pages.sort()
    var fd: Int32 = -1
    try check(mdb_env_get_fd(env, &fd), "mdb_env_get_fd")
    var file = Glibc.stat()
    guard fstat(fd, &file) == 0 else { throw LMDBError(errno, "fstat") }
    let inFile = Int(file.st_size) / pageSize
    // A page that reads zeros already is left alone (read in the map: the
    // file's pages as they are, another process's writes included).
    let map = environment.mappedRanges().first
    let dirty = pages.filter { page in
      guard page < inFile else { return false }
      guard let map, UInt(page + 1) * UInt(pageSize) <= UInt(map.count),
        let start = UnsafeRawPointer(bitPattern: map.lowerBound)
      else { return true }
      return !isZero(start + page * pageSize, count: pageSize)
    }
    // In runs, in page order, one pwrite each. A run goes on over up to
    // `scrubGap` pages between two it zeroes (in use, held by a reader, or
    // zeros already), written with the bytes they hold (read in the map:
    // under the writer lock nobody changes them, and a reader reads the
    // same bytes before, during and after; the meta pages, 0 and 1, come
    // before every free page): the disk takes fewer, longer writes far
    // faster than many short ones.
    let mapped = map.map { Int($0.count) / pageSize } ?? 0
    let base = map.flatMap { UnsafeRawPointer(bitPattern: $0.lowerBound) }
    let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: scrubRun * pageSize, alignment: pageSize)
    defer { buffer.deallocate() }
    var start = 0
    while start < dirty.count {
      let first = dirty[start]
      var end = start + 1
      while end < dirty.count, dirty[end] - first < scrubRun {
        let gap = dirty[end] - dirty[end - 1] - 1
        guard gap == 0 || (base != nil && gap <= scrubGap && dirty[end] < mapped) else { break }
        end += 1
      }
      let count = dirty[end - 1] - first + 1
      buffer.baseAddress!.initializeMemory(as: UInt8.self, repeating: 0, count: count * pageSize)
      for i in start..<(end - 1) where dirty[i + 1] > dirty[i] + 1 {
        let gap = dirty[i] + 1
        (buffer.baseAddress! + (gap - first) * pageSize).copyMemory(
          from: base! + gap * pageSize, byteCount: (dirty[i + 1] - gap) * pageSize)
      }
      try writeAll(fd, buffer.baseAddress!, count: count * pageSize, at: first * pageSize)
      start = end
    }
    var gapBytes = 0
    if scanGaps {
      var info = MDB_envinfo()
      try check(mdb_env_info(env, &info), "mdb_env_info")
      let inUse = min(Int(info.me_last_pgno) + 1, inFile)
      free.sort()
      gapBytes = try withFileMapped(fd, bytes: inUse * pageSize) { file in
        // A library whose pages are laid out otherwise would be scanned
        // for nothing: refused instead.
        guard knowsPageLayout(of: file, pages: inUse, pageSize: pageSize) else {
          throw LMDBError(LMDBError.versionMismatch, "purge's page scan")
        }
        // A window at a time, each let go of once scanned and zeroed: the
        // whole file's pages stayed in the process until the unmap, and a
        // first import's peak memory grew with its database (a million
        // lines: 142 → 326 MiB). On a shared file mapping `MADV_DONTNEED`
        // only unmaps: the pages stay in the page cache, the file as it is.
        var bytes = 0
        try forEachGapWindow(in: file, pages: inUse, pageSize: pageSize, free: free, window: scanWindow) {
          gaps, scanned in
          try zeroGaps(gaps, in: file, fd: fd, pageSize: pageSize)
          bytes += gaps.reduce(0) { $0 + $1.range.count }
          _ = madvise(
            UnsafeMutableRawPointer(mutating: file + scanned.lowerBound * pageSize), scanned.count * pageSize,
            MADV_DONTNEED)
        }
        return bytes
      }
    }
    if syncing, !dirty.isEmpty || gapBytes > 0, fdatasync(fd) != 0 { throw LMDBError(errno, "fdatasync") }
    return (UInt64(dirty.count * pageSize + gapBytes), held)
  }

  /// Lends `body` the first `bytes` of the data file, mapped read-only
  /// and shared: the file's pages as they are, whatever this process's
  /// own map covers.
  private static func withFileMapped<R>(_ fd: Int32, bytes: Int, _ body: (UnsafeRawPointer) throws -> R) throws -> R {
    guard bytes > 0 else { return try body(UnsafeRawPointer(bitPattern: 1)!) }
    let map = mmap(nil, bytes, PROT_READ, MAP_SHARED, fd, 0)
    guard let map, map != MAP_FAILED else { throw LMDBError(errno, "mmap") }
    defer { munmap(map, bytes) }
    return try body(UnsafeRawPointer(map))
  }

  /// Pages one `pwrite` writes at most.
  static let scrubRun = 1024
  /// Pages the gap scan holds mapped in at once (8 MiB of 4 KiB pages; a
  /// test makes it a few, for a small file).
  @TaskLocal static var scanWindow = 2048
  /// Pages in use a run goes on over (rewritten as they are): at 8, the
  /// benchmark's scrub took 0.14 s where one pwrite per run of free pages
  /// took 0.23 s (`scripts/bench-forget`, docs/PERFORMANCE.md).
  static let scrubGap = 8

  /// The oldest transaction a reader's snapshot holds, as `mdb_find_oldest`
  /// reckons it for the write transaction `writing`: its predecessor, or an
  /// older reader's. Read from `mdb_reader_list`, LMDB's own report of its
  /// reader table; a line it cannot read makes it 0 (nothing is scrubbed).
  private static func oldestSnapshot(of env: OpaquePointer, writing: UInt64) throws -> UInt64 {
    var oldest = writing - 1
    let rc = withUnsafeMutablePointer(to: &oldest) { oldest in
      mdb_reader_list(
        env,
        { message, context in
          guard let message, let context else { return 0 }
          let oldest = context.assumingMemoryBound(to: UInt64.self)
          // "    pid     thread     txnid", then "<pid> <thread> <txnid or ->"
          // per reader (or "(no active readers)").
          let fields = String(cString: message).split(whereSeparator: \.isWhitespace)
          guard fields.count == 3, Int(fields[0]) != nil else { return 0 }
          if fields[2] == "-" { return 0 }
          oldest.pointee = min(oldest.pointee, UInt64(fields[2]) ?? 0)
          return 0
        }, oldest)
    }
    if rc < 0 { return 0 }
    return oldest
  }

  private static func isZero(_ page: UnsafeRawPointer, count: Int) -> Bool {
    let words = page.assumingMemoryBound(to: UInt64.self)
    for i in 0..<(count / 8) where words[i] != 0 { return false }
    return true
  }

  static func writeAll(_ fd: Int32, _ bytes: UnsafeRawPointer, count: Int, at offset: Int) throws {
    var done = 0
    while done < count {
      let n = pwrite(fd, bytes + done, count - done, off_t(offset + done))
      if n < 0, errno == EINTR { continue }
      guard n > 0 else { throw LMDBError(n < 0 ? errno : EIO, "pwrite") }
      done += n
    }
  }
}
