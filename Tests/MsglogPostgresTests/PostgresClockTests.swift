import Foundation
import Msglog
import MsglogTestSupport
import Testing

/// Which clock an event's time is on PostgreSQL: the server's, so that
/// writers on machines whose clocks disagree still record times that go
/// forward with the seqs.
@Suite struct PostgresClockTests {
  /// Two writers whose own clocks are an hour ahead and an hour behind,
  /// taking turns: every time is the server's (within a minute of now, on
  /// this machine, where the server runs) and none is earlier than the one
  /// before it.
  @Test func eventTimesAreTheServersAndNeverGoBack() throws {
    let s = Sandbox(.postgres)
    let hour: Int64 = 3_600_000
    let ahead = try EventLog(
      s.db,
      configuration: EventLog.Configuration(clock: { Timestamp(milliseconds: Timestamp.now().milliseconds + hour) }))
    let behind = try EventLog(
      s.db,
      configuration: EventLog.Configuration(clock: { Timestamp(milliseconds: Timestamp.now().milliseconds - hour) }))
    let started = Timestamp.now()
    for i in 0..<10 {
      try ahead.append("from the machine ahead \(i)")
      try behind.append("from the machine behind \(i)", to: StreamName("other"))
      if i > 0 { try behind.move(from: 0, to: i) }
    }
    let finished = Timestamp.now()
    let times = try ahead.events(from: 1, limit: .max, stream: nil).map(\.time)
    #expect(times.count == 29)
    #expect(zip(times, times.dropFirst()).allSatisfy { $0 <= $1 }, "times went back: \(times.map(\.rfc3339))")
    let minute: Int64 = 60_000
    #expect(
      times.allSatisfy {
        $0.milliseconds >= started.milliseconds - minute && $0.milliseconds <= finished.milliseconds + minute
      }, "not the server's clock: \(times.map(\.rfc3339))")
    // An imported time is kept as given: it is the event's own.
    let r = s.run(["import"], stdin: Data(#"{"op":"append","text":"old","time":"2001-02-03T04:05:06.007Z"}"#.utf8))
    #expect(r.code == 0, "\(r)")
    #expect(s.run(["log", "--from", "30"]).stdout.contains("2001-02-03T04:05:06.007Z"))
  }
}
