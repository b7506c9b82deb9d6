import Msglog

/// A read of the store made on a thread of its own and waited for a
/// bounded time: a store that hangs (a PostgreSQL server stopped, locked,
/// or unreachable behind a firewall) costs the caller `patience`, not a
/// worker for as long as the store takes. While one read is still out,
/// later callers wait for it rather than start another, so a hung store
/// holds one thread, however often it is asked. What `/readyz` and
/// `/metrics` read this way.
final class PatientRead<Value: Sendable>: Sendable {
  enum Outcome {
    /// The read ended within the patience (a read that failed says so in
    /// its value).
    case answered(Value)
    /// It did not; the last read that ended found `last` (nil before any).
    case unanswered(last: Value?)
    /// No thread could be started for it.
    case noThread(last: Value?)
  }

  private struct Probe {
    var running = false
    /// Bumped by each read that ends.
    var finished = 0
    var last: Value? = nil
  }

  private let probe = Guarded(Probe())
  private let patience: Double
  /// Reads the store, given what the last read found.
  private let body: @Sendable (_ last: Value?) -> Value
  /// Starts a thread (`startThread`; another in the tests); false when none could be.
  private let start: ThreadStarter

  typealias ThreadStarter = @Sendable (_ body: @escaping @Sendable () -> Void) -> Bool

  init(
    patience: Double, startingOn start: @escaping ThreadStarter = startThread,
    _ body: @escaping @Sendable (_ last: Value?) -> Value
  ) {
    self.patience = patience
    self.start = start
    self.body = body
  }

  func read() -> Outcome {
    let deadline = Deadline.after(seconds: patience)
    let (seen, starting, last) = probe.update { probe in
      defer { probe.running = true }
      return (probe.finished, !probe.running, probe.last)
    }
    if starting {
      let started = start { [probe, body] in
        let value = body(last)
        probe.update { probe in
          probe.last = value
          probe.finished += 1
          probe.running = false
        }
      }
      if !started {
        probe.update { $0.running = false }
        return .noThread(last: last)
      }
    }
    return probe.wait(until: { $0.finished > seen }, deadline: deadline, wakingOthers: false) { probe, ended in
      ended ? .answered(probe.last!) : .unanswered(last: probe.last)
    }
  }
}
