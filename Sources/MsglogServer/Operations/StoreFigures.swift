import Msglog

/// What `/metrics` reads from the store — the head, the sync bookkeeping —
/// read as `/readyz`'s read is (`PatientRead`, a second at most): a
/// database that hangs leaves a scrape with the head last read (or the one
/// the commit hub last saw) and no sync gauges, rather than waiting as long
/// as the database does. The scrape is how an operator sees that something
/// is wrong, and a scraper gives up after a few seconds.
final class StoreFigures: Sendable {
  struct Figures: Sendable {
    var head: UInt64?
    var sync: SyncBookkeeping?
  }

  private let probe: PatientRead<Figures>
  static let patience: Double = 1

  init(log: EventLog) {
    // The head last read stands when a read fails; the sync bookkeeping
    // only if it answered (stale gauges would say nothing true).
    probe = PatientRead(patience: Self.patience) { last in
      Figures(head: (try? log.headSeq()) ?? last?.head, sync: try? log.syncBookkeeping())
    }
  }

  /// The figures read now, or the last read's head if the store does not
  /// answer within `patience` seconds.
  func read() -> Figures {
    switch probe.read() {
    case .answered(let figures): return figures
    case .unanswered(let last), .noThread(let last): return Figures(head: last?.head, sync: nil)
    }
  }
}
