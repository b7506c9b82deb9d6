import CLMDB
import Foundation
import MsglogCore
import MsglogTestSupport
import Testing

@testable import MsglogLMDB

#if canImport(Glibc)
  import Glibc
#endif

/// `Environment.lengthShortfall`: a data file shorter than its last page
/// is sound when every page it lacks is free (LMDB counts pages allocated
/// and freed in one transaction and never writes them), and cut short when
/// one of them is in use, in a table or in the free list itself (read from
/// the file, not the map, where it would fault): then a write changes
/// nothing.
@Suite struct FileLengthTests {
  /// What a test knows of the environment it made: the page size, the
  /// last page, the first of the free pages that end the file (the last
  /// page + 1 when it ends in a page in use), the free list's root, and
  /// the data file's bytes.
  struct Made {
    var pageSize: Int, lastPage: Int, firstFree: Int, freeRoot: Int
    var file: Data

    /// A database directory holding the first `bytes` of the file.
    func cut(to bytes: Int) throws -> TemporaryDirectory {
      let dir = TemporaryDirectory()
      try FileManager.default.createDirectory(atPath: dir.db, withIntermediateDirectories: true)
      try file.prefix(bytes).write(to: URL(fileURLWithPath: dir.db + "/data.mdb"))
      return dir
    }
  }

  /// Values of 100 and 50 pages put, the second deleted, then small writes
  /// that reuse pages from the start of the free list: the file ends in
  /// free pages, and before them the free list's root (its commit takes a
  /// new page from the end). With `lastValue`, a value of 60 pages is put
  /// last: no run of free pages is that long, so it ends the file, and
  /// the free list's root is taken from the pages the search for a run
  /// found.
  static func make(_ path: String, lastValue: Bool = false, freed: Int = 50) throws -> Made {
    try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
    let env = try Environment(path: path, readOnly: false, maxDatabases: 4, mapSize: 16 << 20)
    func put(_ key: String, pages: Int) throws {
      try env.write { txn in
        let table = try #require(try txn.openTable("t", create: true))
        try txn.put(table, Array(key.utf8), [UInt8](repeating: 7, count: max(1, pages * env.pageSize)))
      }
    }
    try put("kept", pages: 100)
    try put("deleted", pages: freed)
    try env.write { txn in
      _ = try txn.delete(try #require(try txn.openTable("t", create: false)), Array("deleted".utf8))
    }
    for i in 0..<4 { try put("small \(i)", pages: 0) }
    if lastValue { try put("last", pages: 60) }
    let lastPage = env.bytesByMeta / env.pageSize - 1
    var free = Set<Int>()
    try env.read { txn in try txn.forEachFreePage { page, _ in free.insert(page) } }
    var firstFree = lastPage + 1
    while free.contains(firstFree - 1) { firstFree -= 1 }
    let freeRoot = try #require(try newerMeta(of: path + "/data.mdb", pageSize: env.pageSize).freeListRoot)
    return Made(
      pageSize: env.pageSize, lastPage: lastPage, firstFree: firstFree, freeRoot: Int(freeRoot),
      file: try Data(contentsOf: URL(fileURLWithPath: path + "/data.mdb")))
  }

  /// The newer of the data file's two meta pages.
  static func newerMeta(of file: String, pageSize: Int) throws -> MetaPage {
    let fd = open(file, O_RDONLY)
    try #require(fd >= 0)
    defer { close(fd) }
    let pages = [0, pageSize].compactMap { MetaPage.read(fd, at: $0) }
    return try #require(pages.max { $0.transaction < $1.transaction })
  }

  /// A write into `env` is refused with `failure`, leaving its data file
  /// as `before`, byte for byte.
  static func expectWriteRefused(_ env: Environment, _ failure: LMDBFailure, leaving before: Data) throws {
    #expect(throws: MsglogError.lmdbFailure(failure)) {
      try env.write { txn in try txn.put(try #require(try txn.openTable("t", create: false)), [10], [10]) }
    }
    #expect(try Data(contentsOf: URL(fileURLWithPath: env.path + "/data.mdb")) == before)
  }

  /// Without its free tail (and with half a free page more): sound, read and written.
  @Test func aFileLackingOnlyFreePagesIsSound() throws {
    let dir = TemporaryDirectory()
    let made = try Self.make(dir.db)
    try #require(
      made.lastPage - made.firstFree >= 40, "the file ends in \(made.lastPage - made.firstFree + 1) free pages")
    #expect(made.file.count == (made.lastPage + 1) * made.pageSize)
    let sound = try made.cut(to: made.firstFree * made.pageSize + made.pageSize / 2)
    let env = try Environment(path: sound.db, readOnly: false, maxDatabases: 4, mapSize: 16 << 20)
    #expect(try env.lengthShortfall(ofCommit: env.lastCommittedTransaction) == nil)
    try env.write { txn in try txn.put(try #require(try txn.openTable("t", create: false)), [9], [9]) }
    let nine = try env.read { txn in
      try txn.get(try #require(try txn.openTable("t", create: false)), [9]) { Array($0) }
    }
    #expect(nine == [9])
  }

  /// Without half of its last page, a value's: a write throws before it
  /// changes a byte, naming the page.
  @Test func aFileLackingAPageInUseIsCutShortAndNotWritten() throws {
    let dir = TemporaryDirectory()
    let made = try Self.make(dir.db, lastValue: true)
    try #require(made.firstFree == made.lastPage + 1 && made.freeRoot < made.lastPage - 60, "\(made)")
    let bytes = made.lastPage * made.pageSize + made.pageSize / 2
    let short = try made.cut(to: bytes)
    let env = try Environment(path: short.db, readOnly: false, maxDatabases: 4, mapSize: 16 << 20)
    let failure = LMDBFailure.fileCutShort(
      bytes: UInt64(bytes), lostPage: UInt64(made.lastPage), pageSize: UInt64(made.pageSize))
    try Self.expectWriteRefused(env, failure, leaving: made.file.prefix(bytes))
    #expect(try env.lengthShortfall(ofCommit: env.lastCommittedTransaction) == failure)
  }

  /// Without the free list's root, whole: said so, naming it, without a
  /// fault, and nothing written.
  @Test func aFileLackingItsFreeListsRootSaysSo() throws {
    let dir = TemporaryDirectory()
    let made = try Self.make(dir.db)
    try #require(made.freeRoot == made.firstFree - 1, "\(made)")
    let bytes = made.freeRoot * made.pageSize
    let short = try made.cut(to: bytes)
    let env = try Environment(path: short.db, readOnly: false, maxDatabases: 4, mapSize: 16 << 20)
    let failure = LMDBFailure.fileCutShort(
      bytes: UInt64(bytes), lostPage: UInt64(made.freeRoot), pageSize: UInt64(made.pageSize))
    try Self.expectWriteRefused(env, failure, leaving: made.file.prefix(bytes))
  }

  /// A free list of LMDB's layout made by hand, so that a page below its
  /// root is the one lost: a branch root (page 2) over a leaf holding a
  /// record (3) and a leaf whose record lies on an overflow page (4, 5).
  /// Read whole, its page numbers; without the overflow page or the leaf,
  /// that page named; a page that does not say its own number, damage.
  @Test func aFreeListReadFromTheFileNamesThePageItLacks() throws {
    let pageSize = 4096
    var file = [UInt8](repeating: 0, count: 6 * pageSize)
    func put<T: FixedWidthInteger>(_ value: T, at offset: Int) {
      withUnsafeBytes(of: value.littleEndian) { file.replaceSubrange(offset..<(offset + $0.count), with: $0) }
    }
    /// A page header: its number, flags, and `lower` (its node pointers' end).
    func header(_ page: Int, flags: UInt16, nodes: Int) {
      put(UInt64(page), at: page * pageSize)
      put(flags, at: page * pageSize + 10)
      put(UInt16(16 + 2 * nodes), at: page * pageSize + 12)
    }
    /// A node at `offset` in `page`: lo, hi, flags, an 8-byte key, then `value`.
    func node(_ page: Int, pointer: Int, at offset: Int, lo: Int, hi: Int = 0, flags: UInt16 = 0, value: [UInt64]) {
      put(UInt16(offset), at: page * pageSize + 16 + 2 * pointer)
      let start = page * pageSize + offset
      put(UInt16(lo), at: start)
      put(UInt16(hi), at: start + 2)
      put(flags, at: start + 4)
      put(UInt16(8), at: start + 6)
      for (k, word) in value.enumerated() { put(word, at: start + 16 + 8 * k) }
    }
    header(2, flags: 0x01, nodes: 2)
    node(2, pointer: 0, at: 3000, lo: 3, value: [])
    node(2, pointer: 1, at: 3100, lo: 4, value: [])
    header(3, flags: 0x02, nodes: 1)
    node(3, pointer: 0, at: 3000, lo: 24, value: [2, 10, 11])
    header(4, flags: 0x02, nodes: 1)
    node(4, pointer: 0, at: 3000, lo: 32, flags: 0x01, value: [5])
    put(UInt64(5), at: 5 * pageSize)
    put(UInt16(0x04), at: 5 * pageSize + 10)
    put(UInt32(1), at: 5 * pageSize + 12)
    for (k, word) in [UInt64(3), 12, 13, 14].enumerated() { put(word, at: 5 * pageSize + 16 + 8 * k) }

    let dir = TemporaryDirectory()
    let path = dir.path + "/free-list"
    try Data(file).write(to: URL(fileURLWithPath: path))
    let fd = open(path, O_RDONLY)
    try #require(fd >= 0)
    defer { close(fd) }
    func read(held: Int) -> Result<[Int], FreeListFile.Unreadable> {
      var pages: [Int] = []
      do {
        try FreeListFile(fd: fd, pageSize: pageSize, heldPages: held, lastPage: 16).forEachFreePage(root: 2) { page in
          pages.append(page)
          return true
        }
        return .success(pages)
      } catch let error as FreeListFile.Unreadable {
        return .failure(error)
      } catch {
        return .success([-1])
      }
    }
    #expect(try read(held: 6).get() == [10, 11, 12, 13, 14])
    guard case .failure(.lost(page: 5)) = read(held: 5) else { Issue.record("\(read(held: 5))"); return }
    guard case .failure(.lost(page: 4)) = read(held: 4) else { Issue.record("\(read(held: 4))"); return }
    put(UInt64(9), at: 4 * pageSize)
    try Data(file).write(to: URL(fileURLWithPath: path))
    guard case .failure(.damaged) = read(held: 6) else { Issue.record("\(read(held: 6))"); return }
  }

  /// On a real database whose free list is a tree of several levels with
  /// a record on overflow pages (an old reader held open while 1,500
  /// writes free pages, a record each, and one frees 600 at once), the
  /// file's reading finds exactly the pages LMDB's own cursor finds.
  @Test func theFreeListReadFromTheFileIsLMDBs() throws {
    let dir = TemporaryDirectory()
    try FileManager.default.createDirectory(atPath: dir.db, withIntermediateDirectories: true)
    let env = try Environment(path: dir.db, readOnly: false, maxDatabases: 4, mapSize: 256 << 20)
    try env.write { txn in
      try txn.put(
        try #require(try txn.openTable("t", create: true)), Array("big".utf8),
        [UInt8](repeating: 1, count: 600 * env.pageSize))
    }
    try env.read { _ in
      try env.write { txn in _ = try txn.delete(try #require(try txn.openTable("t", create: false)), Array("big".utf8))
      }
      for i in 0..<1_500 {
        try env.write { txn in
          try txn.put(
            try #require(try txn.openTable("t", create: false)), Array("k\(i % 300)".utf8),
            [UInt8](repeating: 2, count: 900))
        }
      }
    }
    let (depth, overflow, lmdbs) = try env.read { txn in
      var stat = MDB_stat()
      mdb_stat(txn.handle, 0, &stat)
      var pages: [Int] = []
      try txn.forEachFreePage { page, _ in pages.append(page) }
      return (Int(stat.ms_depth), Int(stat.ms_overflow_pages), pages.sorted())
    }
    try #require(depth >= 2 && overflow >= 1, "the free list is \(depth) deep, \(overflow) overflow pages")
    let meta = try Self.newerMeta(of: dir.db + "/data.mdb", pageSize: env.pageSize)
    let fd = open(dir.db + "/data.mdb", O_RDONLY)
    try #require(fd >= 0)
    defer { close(fd) }
    var file = stat()
    try #require(fstat(fd, &file) == 0)
    var read: [Int] = []
    let list = FreeListFile(
      fd: fd, pageSize: env.pageSize, heldPages: Int(file.st_size) / env.pageSize, lastPage: Int(meta.lastPage))
    try list.forEachFreePage(root: Int(try #require(meta.freeListRoot))) { page in
      read.append(page)
      return true
    }
    #expect(read.sorted() == lmdbs, "\(read.count) pages read from the file, \(lmdbs.count) by LMDB")
    #expect(lmdbs.count >= 600)
  }
}
