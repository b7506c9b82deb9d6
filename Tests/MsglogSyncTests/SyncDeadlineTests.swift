import Foundation
import Msglog
import MsglogTestSupport
import Testing

#if canImport(Glibc)
  import Glibc
#endif

/// A remote that answers, but never finishes — a byte now and then, or
/// `100 Continue` for ever — cannot hold a sync (or its lock) for ever:
/// each exchange has a bound and the whole run another (`--timeout`,
/// `SyncOptions`). The bounds here are short so the tests are quick.
@Suite(.serialized) struct SyncDeadlineTests {
  /// Waits for `child` to end; a watchdog kills it (and the test fails)
  /// when it does not within `seconds`.
  static func finish(_ child: Sandbox.Child, within seconds: Double) -> (Run, Duration) {
    let clock = ContinuousClock()
    let start = clock.now
    while child.process.isRunning && clock.now - start < .seconds(seconds) { usleep(20_000) }
    let ended = !child.process.isRunning
    if !ended { kill(child.process.processIdentifier, SIGKILL) }
    let run = child.finish()
    #expect(ended, "still running after \(seconds) s: \(run)")
    return (run, clock.now - start)
  }

  @Test(arguments: ["trickle 0.2", "continue 0.2"])
  func aSyncGivesUpWithinItsBound(lie: String) throws {
    let setup = try MaliciousRemoteTests.Setup()
    _ = setup.replica.run(["append", "offline"])
    setup.liar.lie(lie)
    let (run, took) = Self.finish(setup.replica.start(["sync", "--timeout", "2"]), within: 60)
    #expect(run.code == 1 && run.stdout.isEmpty, "\(run)")
    #expect(
      run.stderr == """
        msglog: gave up on \(setup.liar.url): the sync took longer than its bound of 2 s
        hint: nothing pending is lost: 'msglog sync' goes on where this one stopped; --timeout SECONDS gives a slow remote longer

        """, "\(run)")
    #expect(took >= .seconds(2), "\(took)")
    // The lock went with it, and nothing pending was lost.
    setup.honestSyncEndsInSync()
    #expect(setup.server.run(["list"]).stdout.contains("offline"))
  }

  @Test func aCloneGivesUpWithinItsBoundAndMakesNothing() throws {
    let setup = try MaliciousRemoteTests.Setup()
    setup.liar.lie("trickle 0.2")
    let elsewhere = Sandbox()
    let (run, _) = Self.finish(elsewhere.start(["clone", setup.liar.url, "--timeout", "1"]), within: 60)
    #expect(
      run.code == 1 && run.stderr.contains("the sync took longer than its bound of 1 s")
        && run.stderr.contains("hint: nothing was made: clone again"), "\(run)")
    #expect(elsewhere.isEmpty)
  }

  /// One exchange's own bound, shorter than the run's (the library's
  /// `SyncOptions.exchangeTimeout`; the run's bound, 30 s, is what ends
  /// the sync when the exchange's does not hold).
  @Test func anExchangeHasItsOwnBound() throws {
    let setup = try MaliciousRemoteTests.Setup()
    setup.liar.lie("trickle 0.2")
    let log = try EventLog(setup.replica.db)
    let url = setup.liar.url
    #expect(throws: MsglogError.syncTimedOut(remote: url, bound: .exchange, seconds: 1)) {
      try log.sync(options: SyncOptions(timeout: 30, exchangeTimeout: 1))
    }
  }

  /// `sync --follow` bounds each round: against a trickling remote it says
  /// so and tries again, rather than waiting for ever.
  @Test func aLiveSyncBoundsEachRound() throws {
    let setup = try MaliciousRemoteTests.Setup()
    setup.liar.lie("trickle 0.2")
    let follower = setup.replica.start(["sync", "--follow", "--timeout", "1"])
    defer {
      kill(follower.process.processIdentifier, SIGKILL)
      _ = follower.finish()
    }
    // A watchdog: the second notice of a round given up on.
    var notices = 0
    for _ in 0..<1500 where notices < 2 {
      let text = (try? String(contentsOfFile: follower.errPath, encoding: .utf8)) ?? ""
      notices = text.components(separatedBy: "the sync took longer than its bound of 1 s (trying again in").count - 1
      if notices < 2 { usleep(20_000) }
    }
    #expect(notices >= 2)
    kill(follower.process.processIdentifier, SIGTERM)
    let ended = follower.finish()
    #expect(ended.code == 0, "\(ended)")
  }
}
