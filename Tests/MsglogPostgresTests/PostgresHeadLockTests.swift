import Foundation
import MsglogTestSupport
import Testing

@testable import MsglogPostgres

/// The check a write on what was known opens its commit with
/// (`PostgresSchema.lockHead(ifAt:version:)`), on a real cluster: sent
/// behind a commit that is still in flight, it waits for that commit and
/// passes on the row it leaves — an overlapped batch is not taken back —
/// and fails on any other row.
@Suite struct PostgresHeadLockTests {
  /// On a log of one event, a move of the head row to seq 2 in a
  /// transaction left open on a connection of its own, and the check of
  /// that move's version at `seq`, sent on another connection on a thread;
  /// made once the check waits at the row's lock.
  final class Race: @unchecked Sendable {  // `failure`: set on the check's thread, read after `answered`
    let sandbox = Sandbox(.postgres)
    let moving: Connection
    let checking: Connection
    let answered = DispatchSemaphore(value: 0)
    private var failure: PostgresError?

    init(checkingAt seq: UInt64) throws {
      sandbox.append("seed")
      let conninfo = try PostgresLocation(sandbox.db).conninfo
      moving = try Connection(conninfo)
      checking = try Connection(conninfo)
      let observer = try Connection(conninfo)
      try moving.execute("BEGIN")
      let moved = PostgresSchema.moveHead(to: 2)
      let version = try #require(try moving.execute(moved.sql, moved.parameters).text(0, 0))
      let pid = try #require(try checking.execute("SELECT pg_backend_pid()::int8").int64(0, 0))
      let check = PostgresSchema.lockHead(ifAt: seq, version: version)
      Thread { [self] in
        defer { answered.signal() }
        do throws(PostgresError) {
          _ = try checking.execute(check.sql, check.parameters)
        } catch {
          failure = error
        }
      }.start()
      // Until the server says the check waits for the move's transaction.
      let deadline = Date().addingTimeInterval(20)
      while try observer.execute("SELECT cardinality(pg_blocking_pids(\(pid)))::int8").int64(0, 0) == 0 {
        guard answered.wait(timeout: .now()) == .timedOut else {
          answered.signal()  // taken by this look: `end` reads it again
          Issue.record("the check was answered without waiting: \(String(describing: failure))")
          return
        }
        guard Date() < deadline else {
          Issue.record("the check never waited at the lock")
          return
        }
        usleep(10_000)
      }
    }

    /// Ends the move (`COMMIT` or `ROLLBACK`); whether the check was then
    /// answered, and its failure.
    func end(with ending: String) throws -> (answered: Bool, failure: PostgresError?) {
      try moving.execute(ending)
      guard answered.wait(timeout: .now() + 20) == .success else { return (false, nil) }
      return (true, failure)
    }
  }

  @Test func aCheckSentBehindACommitInFlightWaitsForItAndPasses() throws {
    let race = try Race(checkingAt: 2)
    let ended = try race.end(with: "COMMIT")
    #expect(ended.answered, "the check never ended")
    #expect(ended.failure == nil, "\(String(describing: ended.failure))")
  }

  @Test func aCheckBehindACommitThatRollsBackFails() throws {
    let race = try Race(checkingAt: 2)
    let ended = try race.end(with: "ROLLBACK")
    #expect(ended.answered && ended.failure?.sqlState == PostgresError.divisionByZero, "\(ended)")
  }

  @Test func aCheckOfAnotherSeqOrVersionFails() throws {
    let race = try Race(checkingAt: 3)
    let ended = try race.end(with: "COMMIT")
    #expect(ended.answered && ended.failure?.sqlState == PostgresError.divisionByZero, "\(ended)")
    // The right seq with a version the row no longer has.
    let stale = PostgresSchema.lockHead(ifAt: 2, version: "1")
    do throws(PostgresError) {
      try race.checking.execute(stale.sql, stale.parameters)
      Issue.record("a check of a stale version passed")
    } catch {
      #expect(error.sqlState == PostgresError.divisionByZero)
    }
  }
}
