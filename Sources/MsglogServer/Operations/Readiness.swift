import Msglog

/// `/readyz`: whether a read of the store answers within a second. The
/// read runs on a thread of its own, so that a store that hangs (a
/// PostgreSQL server unreachable behind a firewall) costs the probe a
/// second, not a worker; while one read is still out, later probes wait
/// for it rather than start another.
final class Readiness: Sendable {
  enum Verdict: Equatable {
    case ready
    case unavailable(String)
  }

  private struct Probe {
    var running = false
    /// Bumped by each read that ends.
    var finished = 0
    var verdict: Verdict = .ready
  }

  private let log: EventLog
  private let probe = Guarded(Probe())
  static let patience: Double = 1

  init(log: EventLog) { self.log = log }

  func check() -> Verdict {
    let deadline = Deadline.after(seconds: Self.patience)
    let (seen, start) = probe.update { probe in
      defer { probe.running = true }
      return (probe.finished, !probe.running)
    }
    if start {
      let log = self.log
      let started = startThread { [probe] in
        let verdict = Self.read(log)
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
      ended ? probe.verdict : .unavailable("a read of \(log.location) did not answer within 1 s")
    }
  }

  private static func read(_ log: EventLog) -> Verdict {
    if log.isDisplaced { return .unavailable("the database \(log.location) was removed or replaced while serving") }
    do {
      _ = try log.headSeq()
      if log.isDisplaced { return .unavailable("the database \(log.location) was removed or replaced while serving") }
      return .ready
    } catch MsglogError.noDatabase {
      return .ready  // nothing written yet: the store answered that (the first write creates it)
    } catch {
      return .unavailable("\(error)")
    }
  }
}
