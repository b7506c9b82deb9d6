import Foundation
import Msglog
import MsglogTestSupport
import Testing

#if canImport(Glibc)
  import Glibc
#endif

/// What an app gets when it opens one database more than once in a
/// process, or writes after its directory was removed: on real LMDB
/// directories, the locks and files read back from the kernel.
@Suite struct OneOpeningTests {
  /// Whether this process holds a record lock on `file` (`/proc/locks`:
  /// LMDB holds one on `lock.mdb` for as long as an environment is open,
  /// and other processes count on it to know their readers are not alone).
  static func holdsLock(on file: String) -> Bool {
    RecordLock.held(on: file).contains { $0.pid == getpid() }
  }

  /// Two logs of one path share one environment: the second one's end
  /// leaves the first one's locks (closing a second environment of the
  /// file dropped every lock this process held on it, so other processes
  /// took its readers for gone), and the last one's end lets them go.
  @Test func twoLogsOfOneDatabaseShareItsLocks() throws {
    let dir = TemporaryDirectory()
    let path = dir.path + "/app.lmdb"
    let lockFile = path + "/lock.mdb"
    var view: EventLog? = try EventLog(path)
    // The first write makes the database (in a staging directory); the
    // next read opens it.
    try view!.append("one")
    _ = try view!.items()
    #expect(Self.holdsLock(on: lockFile))
    do {
      let background = try EventLog(path)
      try background.append("two")
      #expect(try background.items().items.map(\.text) == ["one", "two"])
    }
    #expect(Self.holdsLock(on: lockFile), "the second log's end dropped the first one's locks")
    #expect(try view!.items().items.map(\.text) == ["one", "two"])
    // Now the other way round: the first to open ends first.
    let background = try EventLog(path)
    #expect(try background.items().items.count == 2)
    view = nil
    #expect(Self.holdsLock(on: lockFile), "the first log's end dropped the second one's locks")
    try background.append("three")
    #expect(try background.items().items.map(\.text) == ["one", "two", "three"])
  }

  /// A log opened for reading only and then one for writing in the same
  /// process: the writer is told why it may not write, not handed a
  /// second environment.
  @Test func aWriterAfterAReaderOfTheSameDatabaseIsToldWhy() throws {
    let dir = TemporaryDirectory()
    let path = dir.path + "/app.lmdb"
    try EventLog(path).append("one")
    let reader = try EventLog(path, configuration: .init(access: .readOnly))
    #expect(try reader.items().items.map(\.text) == ["one"])
    let writer = try EventLog(path)
    #expect(try writer.items().items.map(\.text) == ["one"])
    do {
      try writer.append("two")
      Issue.record("a write went through a database this process opened for reading only")
    } catch MsglogError.readOnly(_, _, let reason) {
      #expect(reason.contains("one opening of a database per process"), "\(reason)")
    }
    #expect(Self.holdsLock(on: path + "/lock.mdb"))
  }

  /// Nothing is acknowledged into a deleted file: a write after the
  /// directory was removed, or replaced by another database, is refused
  /// (it committed into a file nobody will open again), and a log opened
  /// anew writes into the database at the path now.
  @Test func aWriteIntoARemovedOrReplacedDatabaseIsNotAcknowledged() throws {
    let dir = TemporaryDirectory()
    let path = dir.path + "/app.lmdb"
    let log = try EventLog(path)
    try log.append("one")
    try log.append("open")
    try FileManager.default.removeItem(atPath: path)
    #expect(throws: MsglogError.writtenDatabaseDisplaced(location: path)) { try log.append("two") }
    #expect(throws: MsglogError.writtenDatabaseDisplaced(location: path)) {
      try log.stream("board").insert("two", at: 0)
    }
    let fresh = try EventLog(path)
    try fresh.append("new")
    #expect(throws: MsglogError.writtenDatabaseDisplaced(location: path)) { try log.append("three") }
    #expect(try fresh.items().items.map(\.text) == ["new"])
    #expect(try EventLog(path).items().items.map(\.text) == ["new"])
  }
}
