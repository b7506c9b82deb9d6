import Msglog

/// `/readyz`: whether a read of the store answers within a second
/// (`PatientRead`: a store that hangs costs the probe a second, not a
/// worker).
final class Readiness: Sendable {
  enum Verdict: Equatable {
    /// A read answered; `replica` on a PostgreSQL standby.
    case ready(replica: Bool)
    case unavailable(String)
  }

  private let probe: PatientRead<Verdict>
  private let location: String
  /// Where the detail goes: the probe's answer names no database, no
  /// host and no error text (it is served without a token); the operator's
  /// log line does.
  private let warnings: ServerLog
  static let patience: Double = 1

  init(log: EventLog, warnings: ServerLog) {
    self.location = log.location
    self.warnings = warnings
    probe = PatientRead(patience: Self.patience) { _ in Self.read(log, warnings: warnings) }
  }

  func check() -> Verdict {
    switch probe.read() {
    case .answered(let verdict):
      return verdict
    case .unanswered:
      warnings.warn("readyz", "a read of \(location) did not answer within 1 s")
      return .unavailable("a read of the store did not answer within 1 s")
    case .noThread:
      return .unavailable("cannot start a thread to read the store")
    }
  }

  private static func read(_ log: EventLog, warnings: ServerLog) -> Verdict {
    let displaced = Verdict.unavailable("the database was removed or replaced while serving; restart the server")
    if log.isDisplaced { return displaced }
    do {
      _ = try log.headSeq()
      return log.isDisplaced ? displaced : .ready(replica: try log.isStandby())
    } catch MsglogError.noDatabase {
      // Nothing written yet: the store answered that (the first write creates it).
      return .ready(replica: (try? log.isStandby()) ?? false)
    } catch {
      warnings.warn("readyz", "the store does not answer: \(error)")
      return .unavailable("the store does not answer")
    }
  }
}
