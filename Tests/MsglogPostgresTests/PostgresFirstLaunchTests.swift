import Foundation
import Msglog
import MsglogTestSupport
import Synchronization
import Testing

#if canImport(Glibc)
  import Glibc
#endif

/// A first launch on PostgreSQL (issue 26 item 2): a database without
/// msglog's tables reads as an empty log at version 0, reading creates no
/// table, and a follower waits (LISTEN) for the first commit, which makes them.
@Suite struct PostgresFirstLaunchTests {
  @Test func aDatabaseWithoutTheTablesReadsAsEmptyAndGetsNone() throws {
    let s = Sandbox(.postgres)
    let log = try EventLog(s.db)
    let board = try log.items(of: "board")
    #expect(board.items.isEmpty && board.version == 0 && board.seq == 0)
    #expect(try log.headSeq() == 0)
    #expect(try log.streams().isEmpty)
    #expect(try log.events().isEmpty)
    #expect(s.isEmpty, "a read made msglog's tables")
    // The command line still says so.
    let r = s.run(["list"])
    #expect(r.code != 0 && r.stderr.contains("no msglog log in"), "\(r)")
    #expect(s.isEmpty)
  }

  @Test func aFollowerWaitsForTheFirstCommit() throws {
    let s = Sandbox(.postgres)
    let follower = try EventLog(s.db)
    let seen = Mutex<[String]>([])
    let waiter = Mutex<pid_t?>(nil)
    let thread = Thread {
      waiter.withLock { $0 = currentThreadID() ?? -1 }
      do {
        // From seq 1, not "after the head": the thread may be blocked in
        // libpq's poll while it starts (reading the head), and a commit
        // before that read would be, rightly, not new to a follower of the
        // head (seen once in a full run: no event in 60 s).
        try follower.follow(from: 1) { event in
          seen.withLock { $0.append("\(event.seq) \(event.opName)") }
          return false
        }
      } catch {
        seen.withLock { $0.append("error: \(error)") }
      }
    }
    thread.start()
    // Blocked in poll: listening by now, most likely (libpq waits in poll
    // too, for its server's answers); either way it must see the commit.
    #expect(waitUntilThreads { waiter.withLock { $0 }.map { isBlockedInPoll(thread: $0) } ?? false })
    #expect(seen.withLock { $0 }.isEmpty)
    try EventLog(s.db).append("first")
    let deadline = Date().addingTimeInterval(60)
    while seen.withLock({ $0.isEmpty }), Date() < deadline { usleep(10_000) }
    #expect(seen.withLock { $0 } == ["1 insert"])
  }
}
