/// Writes from many threads of one process, committed together (group
/// commit): while one transaction is in flight, the writes that arrive
/// wait here; when it ends, the first of them commits everything that
/// waited, in one transaction — one lock, one flush, one notification —
/// and hands each write its own outcome.
///
/// A lone writer never waits: a write that finds nothing in flight and no
/// one else about commits at once, so one writer's latency is what it was.
/// Under load the batch is whatever arrived during the last commit, and the
/// next one waits a moment for the writers of the batch just committed, who
/// are about to come back (at most half the last commit's time, at most
/// 2 ms): otherwise two half-batches would take turns, each paying a whole
/// flush (PostgreSQL's `commit_delay` for the same reason).
final class CommitQueue<Work, Result>: Sendable {
  /// One write waiting for its outcome.
  final class Ticket {
    let work: Work
    /// Set once, by the thread that commits the batch.
    var result: Swift.Result<Result, any Error>?

    init(_ work: Work) { self.work = work }
  }

  /// The most writes one transaction takes (more wait for the next one).
  let batchLimit: Int
  /// Its waiters are woken when a write arrives and when a batch is
  /// committed, and by nothing else.
  private let state = Guarded(State())

  private struct State {
    var waiting: [Ticket] = []
    var committing = false
    /// The size and duration of the last batch committed.
    var lastBatch = 0
    var lastCommit: Duration = .zero
  }

  init(batchLimit: Int) {
    self.batchLimit = batchLimit
  }

  /// Queues `work` and returns its outcome once committed. `commit` is
  /// called with a batch of tickets (this one among them, in arrival
  /// order) by whichever thread commits it, and must give every ticket its
  /// result; what it throws becomes the result of those it left without.
  func submit(_ work: Work, commit: ([Ticket]) throws -> Void) throws -> Result {
    let ticket = Ticket(work)
    state.update { $0.waiting.append(ticket) }
    var waited = false
    while true {
      // Until this write has its outcome, or nothing is in flight: then
      // this thread commits what waits, itself first among them.
      let gathering: (writers: Int, patience: Duration)? = state.wait(
        until: { state in
          if ticket.result != nil || !state.committing { return true }
          waited = true
          return false
        }, wakingOthers: false,
        then: { state, _ in
          guard ticket.result == nil else { return nil }
          state.committing = true
          return waited || state.waiting.count > 1 ? returningWriters(state) : (0, .zero)
        })
      guard let gathering else { break }
      let batch = state.wait(
        until: { $0.waiting.count >= gathering.writers }, deadline: .after(gathering.patience), wakingOthers: false,
        then: { state, _ in
          let batch = Array(state.waiting.prefix(batchLimit))
          state.waiting.removeFirst(batch.count)
          return batch
        })
      let started = ContinuousClock.now
      do {
        try commit(batch)
      } catch {
        for left in batch where left.result == nil { left.result = .failure(error) }
      }
      let took = ContinuousClock.now - started
      state.update { state in
        state.lastBatch = batch.count
        state.lastCommit = took
        state.committing = false
      }
    }
    return try ticket.result!.get()
  }

  /// With others about (this write, or others, waited for the last
  /// commit), how many writers the next batch waits a moment for — the
  /// writers of the last batch, about to come back — and how long: at most
  /// half the last commit's time, at most 2 ms. None when as many wait.
  private func returningWriters(_ state: State) -> (writers: Int, patience: Duration) {
    let expected = min(state.waiting.count + state.lastBatch, batchLimit)
    guard state.waiting.count < expected else { return (0, .zero) }
    return (expected, min(state.lastCommit / 2, .milliseconds(2)))
  }
}
