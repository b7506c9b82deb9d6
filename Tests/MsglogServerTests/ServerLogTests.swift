import Msglog
import Testing

@testable import MsglogServer

/// The operator's warnings, each kind at most once a second.
@Suite struct ServerLogTests {
  /// Two event loops answer 503 at once: each takes the time, then the
  /// lock, so the second to record may hold the earlier time. It is within
  /// the second of the first, not a trap (CI saw a server die of it, at
  /// 200 connections).
  @Test func aWarningTimedBeforeTheLastRecordedIsWithinItsSecond() {
    let log = ServerLog(requests: RequestLog(format: .none))
    let earlier = Deadline.now()
    #expect(log.warn("test", "recorded first, timed later", at: .after(seconds: 0.001)))
    #expect(!log.warn("test", "recorded second, timed earlier", at: earlier))
  }

  /// The time between two instants never traps, whichever came first.
  @Test func timeSinceALaterInstantIsNothing() {
    let earlier = Deadline.now()
    let later = Deadline.after(seconds: 0.001)
    #expect(later.nanoseconds(since: earlier) >= 1_000_000)
    #expect(earlier.nanoseconds(since: later) == 0)
  }
}
