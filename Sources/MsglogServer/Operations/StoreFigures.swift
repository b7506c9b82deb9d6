import Msglog

/// What `/metrics` reads from the store — the head, the sync bookkeeping —
/// read on a thread of its own and waited for a second at most, as
/// `/readyz`'s read is: a database that hangs (stopped, locked, behind a
/// firewall) leaves a scrape with the head last read (or the one the commit
/// hub last saw) and no sync gauges, rather than waiting as long as the
/// database does.
/// The scrape is how an operator sees that something is wrong, and a
/// scraper gives up after a few seconds. While one read is still out, later
/// scrapes wait for it rather than start another.
final class StoreFigures: Sendable {
  struct Figures {
    var head: UInt64?
    var sync: SyncBookkeeping?
  }

  private struct Probe {
    var running = false
    /// Bumped by each read that ends.
    var finished = 0
    /// What the last read found: the head if it answered, the sync
    /// bookkeeping only if it answered (stale gauges would say nothing true).
    var last = Figures()
  }

  private let log: EventLog
  private let probe = Guarded(Probe())
  static let patience: Double = 1

  init(log: EventLog) { self.log = log }

  /// The figures read now, or the last read's if the store does not answer
  /// within `patience` seconds.
  func read() -> Figures {
    let deadline = Deadline.after(seconds: Self.patience)
    let (seen, start) = probe.update { probe in
      defer { probe.running = true }
      return (probe.finished, !probe.running)
    }
    if start {
      let log = self.log
      let started = startThread { [probe] in
        let head = try? log.headSeq()
        let sync = try? log.syncBookkeeping()
        probe.update { probe in
          if let head { probe.last.head = head }
          probe.last.sync = sync
          probe.finished += 1
          probe.running = false
        }
      }
      if !started { probe.update { $0.running = false } }
    }
    return probe.wait(until: { $0.finished > seen }, deadline: deadline, wakingOthers: false) { probe, answered in
      answered ? probe.last : Figures(head: probe.last.head, sync: nil)
    }
  }
}
