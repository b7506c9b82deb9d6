import Msglog

/// `/readyz`: whether a read of the store answers within a second. The
/// read runs on a thread of its own, so that a store that hangs (a
/// PostgreSQL server unreachable behind a firewall) costs the probe a
/// second, not a worker; while one read is still out, later probes wait
/// for it rather than start another.
final class Readiness: Sendable {
  enum Verdict: Equatable {
    /// A read answered; `replica` on a PostgreSQL standby.
    case ready(replica: Bool)
    case unavailable(String)
  }

  private struct Probe {
    var running = false
    /// Bumped by each read that ends.
    var finished = 0
    var verdict: Verdict = .ready(replica: false)
  }

  private let log: EventLog
  private let probe = Guarded(Probe())
  /// Where the detail goes: the probe's answer names no database, no
  /// host and no error text (it is served without a token); the operator's
  /// log line does.
  private let warnings: ServerLog
  static let patience: Double = 1

  init(log: EventLog, warnings: ServerLog) {
    self.log = log
    self.warnings = warnings
  }

  func check() -> Verdict {
    let deadline = Deadline.after(seconds: Self.patience)
    let (seen, start) = probe.update { probe in
      defer { probe.running = true }
      return (probe.finished, !probe.running)
    }
    if start {
      let log = self.log
      let warnings = self.warnings
      let started = startThread { [probe] in
        let verdict = Self.read(log, warnings: warnings)
        probe.update { probe in
          probe.verdict = verdict
          probe.finished += 1
          probe.running = false
        }
      }
      if !started {
        probe.update { $0.running = false }
        return .unavailable("cannot start a thread to read the store")
      }
    }
    return probe.wait(until: { $0.finished > seen }, deadline: deadline, wakingOthers: false) { probe, ended in
      if ended { return probe.verdict }
      warnings.warn("readyz", "a read of \(log.location) did not answer within 1 s")
      return .unavailable("a read of the store did not answer within 1 s")
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
