import Foundation
import Msglog
import MsglogTestSupport
import Synchronization
import Testing

#if canImport(Glibc)
  import Glibc
#endif

/// An app's first launch (issue 26 item 2): a database that does not exist
/// yet reads as an empty log at version 0, reading creates nothing, and a
/// follower waits for the first commit, on a real LMDB directory. The
/// command line keeps saying "no database" (its configuration asks for it).
@Suite struct FirstLaunchTests {
  /// What is in `directory`, sorted (to see that a read left nothing).
  static func entries(_ directory: String) -> [String] {
    ((try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? []).sorted()
  }

  static func isMissing(_ path: String) -> Bool {
    var info = stat()
    return lstat(path, &info) != 0 && errno == ENOENT
  }

  /// Every read of a missing database: no items at version 0 for any
  /// stream, head 0, no streams, no events, an empty export, an empty
  /// replay and diff; the path still does not exist and its parent holds
  /// nothing new (no staging directory).
  @Test func aMissingDatabaseReadsAsAnEmptyLog() throws {
    let dir = TemporaryDirectory()
    let path = dir.path + "/board.lmdb"
    let log = try EventLog(path)
    let board = try log.items(of: "board")
    #expect(board.items.isEmpty && board.version == 0 && board.seq == 0 && board.stream == "board")
    #expect(try log.items().items.isEmpty)
    #expect(try log.headSeq() == 0)
    #expect(try log.streams().isEmpty)
    #expect(try log.events().isEmpty)
    var exported = 0
    try log.export { _ in exported += 1 }
    #expect(exported == 0)
    #expect(try log.replay("board").items.isEmpty)
    #expect(try log.diff("board", from: 0, to: 0).isEmpty)
    #expect(try log.read { try $0.headSeq() } == 0)
    #expect(Self.isMissing(path), "a read created \(path)")
    #expect(Self.entries(dir.path).isEmpty, "\(Self.entries(dir.path))")
    // The first write makes it, as before.
    try log.append("first", to: "board")
    #expect(try log.items(of: "board").items.map(\.text) == ["first"])
  }

  /// An existing empty directory (a volume made for the app) reads as
  /// empty too and stays empty.
  @Test func anEmptyDirectoryReadsAsEmptyAndStaysEmpty() throws {
    let dir = TemporaryDirectory()
    let log = try EventLog(dir.path)
    #expect(try log.items(of: "board").version == 0)
    #expect(try log.headSeq() == 0)
    #expect(Self.entries(dir.path).isEmpty, "\(Self.entries(dir.path))")
  }

  /// Read-only access reads a missing database as empty as well.
  @Test func readOnlyAccessReadsItAsEmpty() throws {
    let dir = TemporaryDirectory()
    let log = try EventLog(dir.db, configuration: .init(access: .readOnly))
    #expect(try log.items().items.isEmpty)
    #expect(Self.isMissing(dir.db))
  }

  /// With `readsMissingDatabaseAsEmpty` off (as the command line opens
  /// it), a read throws `.noDatabase`, and creates nothing either.
  @Test func theOldAnswerIsOneSettingAway() throws {
    let dir = TemporaryDirectory()
    var configuration = EventLog.Configuration()
    configuration.readsMissingDatabaseAsEmpty = false
    let log = try EventLog(dir.db, configuration: configuration)
    #expect {
      try log.items(of: "board")
    } throws: { error in
      guard case MsglogError.noDatabase(let location, .lmdb, false) = error else { return false }
      return location == dir.db
    }
    #expect(Self.isMissing(dir.db))
  }

  /// What a read's closure throws is its own: a `noDatabase` thrown from
  /// inside a snapshot of a database that exists is not taken for a
  /// missing database.
  @Test func aClosuresOwnNoDatabasePassesThrough() throws {
    let dir = TemporaryDirectory()
    let log = try EventLog(dir.db)
    try log.append("x")
    #expect(throws: MsglogError.self) {
      try log.read { _ in throw MsglogError.noDatabase(location: "elsewhere", store: .lmdb, emptyDirectory: false) }
    }
  }

  /// A blocking follower started on a missing database (in a directory
  /// that does not exist yet either, and in an empty directory) gets the
  /// first commit's events, from seq 1, once another process writes them.
  @Test(arguments: ["missing", "missing parent", "empty directory"])
  func aFollowerWaitsForTheFirstCommit(_ place: String) throws {
    let dir = TemporaryDirectory()
    let path: String
    switch place {
    case "missing": path = dir.path + "/board.lmdb"
    case "missing parent": path = dir.path + "/not/yet/board.lmdb"
    default: path = dir.path
    }
    let follower = try EventLog(path)
    let seen = Mutex<[String]>([])
    let started = Mutex<pid_t?>(nil)
    let thread = Thread {
      started.withLock { $0 = currentThreadID() ?? -1 }
      do {
        try follower.follow(from: nil, stream: "board") { event in
          let count = seen.withLock { seen in
            seen.append("\(event.seq) \(event.opName)")
            return seen.count
          }
          return count < 2
        }
      } catch {
        seen.withLock { $0.append("error: \(error)") }
      }
    }
    thread.start()
    // Waiting for the database to be made: blocked in poll.
    #expect(waitUntilThreads { started.withLock { $0 }.map { isBlockedInPoll(thread: $0) } ?? false })
    #expect(seen.withLock { $0 }.isEmpty)
    if place == "missing parent" {
      try FileManager.default.createDirectory(atPath: dir.path + "/not/yet", withIntermediateDirectories: true)
    }
    // Another process writes: LMDB must not have one environment open
    // twice in a process (a second EventLog here would be that).
    for text in ["first", "second"] {
      let r = runProgram(Sandbox.binary, ["--db", path, "append", "--stream", "board", text])
      #expect(r.code == 0, "\(r)")
    }
    let deadline = Date().addingTimeInterval(60)
    while seen.withLock({ $0.count }) < 2, Date() < deadline { usleep(10_000) }
    #expect(seen.withLock { $0 } == ["1 insert", "2 insert"])
  }

  /// A follower of the head (what the server's hub runs) started on a
  /// missing database says the first commits' heads once another process
  /// makes it.
  @Test func aHeadFollowerWaitsForTheFirstCommit() throws {
    let dir = TemporaryDirectory()
    let path = dir.path + "/board.lmdb"
    let follower = try EventLog(path)
    let heads = Mutex<[UInt64]>([])
    let failure = Mutex<String?>(nil)
    let started = Mutex<pid_t?>(nil)
    let thread = Thread {
      started.withLock { $0 = currentThreadID() ?? -1 }
      do {
        try follower.followHead(after: 0) { head in
          heads.withLock { $0.append(head) }
          return head < 2
        }
      } catch {
        failure.withLock { $0 = "\(error)" }
      }
    }
    thread.start()
    #expect(waitUntilThreads { started.withLock { $0 }.map { isBlockedInPoll(thread: $0) } ?? false })
    #expect(heads.withLock { $0 }.isEmpty)
    for text in ["first", "second"] {
      let r = runProgram(Sandbox.binary, ["--db", path, "append", "--stream", "board", text])
      #expect(r.code == 0, "\(r)")
    }
    let deadline = Date().addingTimeInterval(60)
    while heads.withLock({ $0.last }) != 2, failure.withLock({ $0 }) == nil, Date() < deadline { usleep(10_000) }
    let seen = heads.withLock { $0 }
    #expect(failure.withLock { $0 } == nil)
    #expect(seen.last == 2 && seen.allSatisfy { $0 == 1 || $0 == 2 } && seen == seen.sorted(), "\(seen)")
  }

  /// The asynchronous follower waits the same way.
  @Test func anAsyncFollowerWaitsForTheFirstCommit() async throws {
    let dir = TemporaryDirectory()
    let log = try EventLog(dir.db)
    // The writer waits for a thread of the follower's to block in poll
    // (one that was not before: the follower's, or, rarely, a test's
    // beside it — then the follower may see the commit as it starts).
    let before = threadsBlockedInPoll()
    let writer = Task.detached {
      waitUntilThreads { !threadsBlockedInPoll().subtracting(before).isEmpty }
      // Another process (one environment open twice in a process is not allowed).
      return runProgram(Sandbox.binary, ["--db", dir.db, "append", "--stream", "board", "hello"])
    }
    var texts: [UInt64] = []
    for try await event in log.follow(from: 1, stream: "board") {
      texts.append(event.seq)
      break
    }
    #expect(try await writer.value.code == 0)
    #expect(texts == [1])
  }
}
