import Foundation
import MsglogCore
import MsglogTestSupport
import Testing

@testable import MsglogLMDB

#if canImport(Glibc)
  import Glibc
#endif

/// `Environment.checkLength`: a data file shorter than its last page is
/// sound when every page it lacks is free (LMDB counts pages allocated and
/// freed in one transaction and never writes them), and cut short when
/// one of them is in use: then a write changes nothing and a read is told.
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
  static func make(_ path: String, lastValue: Bool = false) throws -> Made {
    try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
    let env = try Environment(path: path, readOnly: false, maxDatabases: 4, mapSize: 16 << 20)
    func put(_ key: String, pages: Int) throws {
      try env.write { txn in
        let table = try #require(try txn.openTable("t", create: true))
        try txn.put(table, Array(key.utf8), [UInt8](repeating: 7, count: max(1, pages * env.pageSize)))
      }
    }
    try put("kept", pages: 100)
    try put("deleted", pages: 50)
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
    // The newer meta page's free-list root (LMDB's `MDB_meta`: the root at
    // byte 80, the transaction id at 144).
    let file = try Data(contentsOf: URL(fileURLWithPath: path + "/data.mdb"))
    func field(_ offset: Int) -> Int {
      file.withUnsafeBytes { Int($0.loadUnaligned(fromByteOffset: offset, as: UInt64.self)) }
    }
    let newer = field(144) > field(env.pageSize + 144) ? 0 : env.pageSize
    return Made(
      pageSize: env.pageSize, lastPage: lastPage, firstFree: firstFree, freeRoot: field(newer + 80), file: file)
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
    try env.read { txn in try env.checkLength(reading: txn) }
    try env.write { txn in try txn.put(try #require(try txn.openTable("t", create: false)), [9], [9]) }
    let nine = try env.read { txn in
      try txn.get(try #require(try txn.openTable("t", create: false)), [9]) { Array($0) }
    }
    #expect(nine == [9])
  }

  /// Without half of its last page, a value's: a write throws before it
  /// changes a byte, naming the page, and so does a read's check.
  @Test func aFileLackingAPageInUseIsCutShortAndNotWritten() throws {
    let dir = TemporaryDirectory()
    let made = try Self.make(dir.db, lastValue: true)
    try #require(made.firstFree == made.lastPage + 1 && made.freeRoot < made.lastPage - 60, "\(made)")
    let bytes = made.lastPage * made.pageSize + made.pageSize / 2
    let short = try made.cut(to: bytes)
    let env = try Environment(path: short.db, readOnly: false, maxDatabases: 4, mapSize: 16 << 20)
    let said = MsglogError.lmdbFailure(
      .fileCutShort(bytes: UInt64(bytes), lostPage: UInt64(made.lastPage), pageSize: UInt64(made.pageSize)))
    #expect(throws: said) {
      try env.write { txn in try txn.put(try #require(try txn.openTable("t", create: false)), [10], [10]) }
    }
    #expect(throws: said) { try env.read { txn in try env.checkLength(reading: txn) } }
    #expect(try Data(contentsOf: URL(fileURLWithPath: short.db + "/data.mdb")) == made.file.prefix(bytes))
  }

  /// Without the free list's root, whole: said so, without reading it
  /// (which would fault), and nothing written.
  @Test func aFileLackingItsFreeListSaysSo() throws {
    let dir = TemporaryDirectory()
    let made = try Self.make(dir.db)
    try #require(made.freeRoot == made.firstFree - 1, "\(made)")
    let bytes = made.freeRoot * made.pageSize
    let short = try made.cut(to: bytes)
    let env = try Environment(path: short.db, readOnly: false, maxDatabases: 4, mapSize: 16 << 20)
    let said = MsglogError.lmdbFailure(
      .fileCutShort(bytes: UInt64(bytes), lostPage: nil, pageSize: UInt64(made.pageSize)))
    #expect(throws: said) {
      try env.write { txn in try txn.put(try #require(try txn.openTable("t", create: false)), [10], [10]) }
    }
    #expect(try Data(contentsOf: URL(fileURLWithPath: short.db + "/data.mdb")) == made.file.prefix(bytes))
  }
}
