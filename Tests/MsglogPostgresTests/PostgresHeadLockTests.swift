import Foundation
import MsglogTestSupport
import Testing

@testable import MsglogPostgres

/// The check a write on what was known opens its commit with
/// (`PostgresSchema.lockHead(ifAt:version:)`), on a real cluster: sent
/// behind a commit that is still in flight, it waits for that commit and
/// passes on the row it leaves — an overlapped batch is not taken back.
@Suite struct PostgresHeadLockTests {
  @Test func aCheckSentBehindACommitInFlightWaitsForItAndPasses() throws {
    let s = Sandbox(.postgres)
    s.append("seed")
    let conninfo = try PostgresLocation(s.db).conninfo
    let committing = try Connection(conninfo)
    let next = try Connection(conninfo)
    try committing.execute("BEGIN")
    let moved = PostgresSchema.moveHead(to: 2)
    let version = try #require(try committing.execute(moved.sql, moved.parameters).text(0, 0))
    let check = PostgresSchema.lockHead(ifAt: 2, version: version)
    let answered = DispatchSemaphore(value: 0)
    let outcome = Outcome()
    Thread {
      defer { answered.signal() }
      do {
        _ = try next.execute(check.sql, check.parameters)
      } catch {
        outcome.failure = "\(error)"
      }
    }.start()
    // It waits at the lock while the head's move is uncommitted…
    #expect(answered.wait(timeout: .now() + 0.5) == .timedOut, "answered before the commit: \(outcome.failure ?? "")")
    try committing.execute("COMMIT")
    // …and passes on the row that commit left.
    #expect(answered.wait(timeout: .now() + 10) == .success)
    #expect(outcome.failure == nil, "\(outcome.failure ?? "")")
    // A check against a version the head no longer has still fails.
    let stale = PostgresSchema.lockHead(ifAt: 2, version: "1")
    #expect(throws: PostgresError.self) { try next.execute(stale.sql, stale.parameters) }
  }

  final class Outcome: @unchecked Sendable {
    var failure: String?
  }
}
