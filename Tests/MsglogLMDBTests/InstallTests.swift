import Foundation
import Msglog
import MsglogTestSupport
import Testing

@testable import MsglogCore
@testable import MsglogLMDB

#if canImport(Glibc)
  import Glibc
#endif

/// `DatabaseFiles.install`: a database built in a staging directory is put
/// in place whole, never over what another process put there first, and
/// an empty directory keeps its inode; `StagingName` tells staging
/// directories from anything else.
@Suite struct InstallTests {
  /// A one-event database in `staging` (closed on return).
  func build(_ staging: String) throws {
    if !FileManager.default.fileExists(atPath: staging) { #expect(mkdir(staging, 0o700) == 0) }
    let store = try LMDBTables(path: staging, create: true)
    _ = store
  }

  func entries(_ path: String) -> [String] {
    ((try? FileManager.default.contentsOfDirectory(atPath: path)) ?? []).sorted()
  }

  @Test func intoNothingTheDirectoryIsRenamed() throws {
    let dir = TemporaryDirectory()
    let staging = dir.db + ".creating-1-1"
    try build(staging)
    #expect(try DatabaseFiles.install(staging, at: dir.db))
    #expect(!FileManager.default.fileExists(atPath: staging))
    #expect(entries(dir.db).contains("data.mdb"))
  }

  @Test func intoAnEmptyDirectoryOnlyTheDataFileMoves() throws {
    let dir = TemporaryDirectory()
    #expect(mkdir(dir.db, 0o750) == 0)
    var before = stat()
    stat(dir.db, &before)
    let staging = dir.db + "/.msglog-creating-1-1"
    try build(staging)
    #expect(try DatabaseFiles.install(staging, at: dir.db))
    var after = stat()
    stat(dir.db, &after)
    #expect(after.st_ino == before.st_ino && after.st_mode == before.st_mode)
    #expect(entries(dir.db) == ["data.mdb"], "\(entries(dir.db))")
    #expect(try EventLog(dir.db, configuration: .init(access: .readOnly)).headSeq() == 0)
  }

  @Test func neverOverADatabaseThatGotThereFirst() throws {
    let dir = TemporaryDirectory()
    try EventLog(dir.db).append("first")
    let data = FileManager.default.contents(atPath: dir.db + "/data.mdb")
    for staging in [dir.db + ".creating-1-2", dir.db + "/.msglog-creating-1-3"] {
      try build(staging)
      #expect(try DatabaseFiles.install(staging, at: dir.db) == false)
      #expect(FileManager.default.contents(atPath: dir.db + "/data.mdb") == data)
      DatabaseFiles.removeStaging(staging)
    }
    #expect(entries(dir.db).allSatisfy { ["data.mdb", "lock.mdb"].contains($0) })
  }

  @Test func aDirectoryWithOtherFilesIsRefused() throws {
    let dir = TemporaryDirectory()
    #expect(mkdir(dir.db, 0o700) == 0)
    _ = FileManager.default.createFile(atPath: dir.db + "/notes.txt", contents: Data("mine".utf8))
    let staging = dir.db + ".creating-1-4"
    try build(staging)
    #expect(throws: MsglogError.self) { try DatabaseFiles.install(staging, at: dir.db) }
    #expect(entries(dir.db) == ["notes.txt"])
    DatabaseFiles.removeStaging(staging)
  }

  @Test func stagingNames() {
    #expect(StagingName(beside: "board.lmdb.creating-42-7", of: "board.lmdb") == StagingName(purpose: .creating, pid: 42))
    #expect(StagingName(beside: "board.lmdb.cloning-42-7", of: "board.lmdb")?.purpose == .cloning)
    #expect(StagingName(beside: "board.lmdb.backup-42-7", of: "board.lmdb")?.purpose == .backup)
    #expect(StagingName(inside: ".msglog-creating-42-7") == StagingName(purpose: .creating, pid: 42))
    for name in [
      "board.lmdb.creating-42", "board.lmdb.creating-x-7", "board.lmdb.creating--42-7", "board.lmdbx.creating-42-7",
      "board.lmdb.moving-42-7", "board.lmdb.creating-42-7-1", "other.lmdb.creating-42-7",
    ] {
      #expect(StagingName(beside: name, of: "board.lmdb") == nil, "\(name)")
    }
    for name in [".msglog-creating-0-1", "msglog-creating-1-1", ".msglog-creating-1", "data.mdb"] {
      #expect(StagingName(inside: name) == nil, "\(name)")
    }
  }
}
