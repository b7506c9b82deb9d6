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
///
/// Overlapped commits: a store across a network says when a batch's commit
/// has been sent (`commit`'s `sent`), and the next batch may then be built
/// and sent behind it while it flushes, on the state it will leave — at
/// most one batch in flight while the next is built. That pays only while
/// building a batch takes about as long as committing one (the server and
/// this process then work at once); where the commit's flush is the longer
/// part, a batch built early would only halve the batches, since the
/// writers of the one in flight cannot join it. So the next batch is
/// built early only while the last build took at least as long as the
/// last commit's own time on the server (`Pace`).
final class CommitQueue<Work, Result>: Sendable {
  /// One write waiting for its outcome.
  final class Ticket {
    let work: Work
    /// Set once, by the thread that commits the batch.
    var result: Swift.Result<Result, any Error>?
    /// Whether a batch has taken it (its thread then waits for the result).
    var taken = false

    init(_ work: Work) { self.work = work }
  }

  /// The most writes one transaction takes (more wait for the next one).
  let batchLimit: Int
  /// Its waiters are woken when a write arrives, when a batch is sent and
  /// when one is committed, and by nothing else.
  private let state = Guarded(State())

  private struct State {
    var waiting: [Ticket] = []
    /// Whether a batch is being built (taken, not yet sent): one at a time.
    var building = false
    /// Batches sent and not yet committed (or failed).
    var inFlight = 0
    /// The size and duration of the last batch committed.
    var lastBatch = 0
    var lastCommit: Duration = .zero
    var pace = Pace()
    /// Batches built while another was in flight, since the start.
    var overlapped = 0

    /// Whether a write that waits may build the next batch now.
    var mayBuild: Bool { !building && (inFlight == 0 || (inFlight == 1 && pace.overlaps)) }
  }

  /// What the last batches took: to build (taken to sent), and on the
  /// server (sent, or the batch before done, to done).
  private struct Pace {
    var build: Duration = .zero
    var service: Duration = .zero
    /// When the last batch was done.
    var lastDone = ContinuousClock.now

    /// Whether the next batch is built while one commits: only while
    /// building takes at least as long as committing.
    var overlaps: Bool { build > .zero && build >= service }
  }

  init(batchLimit: Int) {
    self.batchLimit = batchLimit
  }

  /// How many batches were built while another was in flight (tests show
  /// with it that commits overlap).
  var overlapped: Int { state.read { $0.overlapped } }

  /// Queues `work` and returns its outcome once committed. `commit` is
  /// called with a batch of tickets (this one among them, in arrival
  /// order) by whichever thread commits it, and must give every ticket its
  /// result; what it throws becomes the result of those it left without.
  /// It may call `sent` (once, before it returns) when the batch's commit
  /// is on its way and the next batch may be built on the state it leaves.
  func submit(_ work: Work, commit: ([Ticket], _ sent: () -> Void) throws -> Void) throws -> Result {
    let ticket = Ticket(work)
    state.update { $0.waiting.append(ticket) }
    var waited = false
    while true {
      // Until this write has its outcome, or it may build the next batch:
      // then this thread commits what waits, itself first among them.
      let gathering: (writers: Int, patience: Duration)? = state.wait(
        until: { state in
          if ticket.result != nil || (!ticket.taken && state.mayBuild) { return true }
          waited = true
          return false
        }, wakingOthers: false,
        then: { state, _ in
          guard ticket.result == nil else { return nil }
          state.building = true
          if state.inFlight > 0 { state.overlapped += 1 }
          return waited || state.waiting.count > 1 ? returningWriters(state) : (0, .zero)
        })
      guard let gathering else { break }
      let batch = state.wait(
        until: { $0.waiting.count >= gathering.writers }, deadline: .after(gathering.patience), wakingOthers: false,
        then: { state, _ in
          let batch = Array(state.waiting.prefix(batchLimit))
          state.waiting.removeFirst(batch.count)
          for ticket in batch { ticket.taken = true }
          return batch
        })
      let started = ContinuousClock.now
      var sentAt: ContinuousClock.Instant? = nil
      func markSent() {
        guard sentAt == nil else { return }
        let now = ContinuousClock.now
        sentAt = now
        state.update { state in
          state.building = false
          state.inFlight += 1
          state.pace.build = now - started
        }
      }
      do {
        try commit(batch, markSent)
      } catch {
        for left in batch where left.result == nil { left.result = .failure(error) }
      }
      let done = ContinuousClock.now
      state.update { state in
        if let sentAt {
          state.inFlight -= 1
          state.pace.service = done - max(sentAt, state.pace.lastDone)
        } else {
          // Committed where it ran (or failed before it was sent): the
          // next batch is built only now.
          state.building = false
          state.pace = Pace()
        }
        state.lastBatch = batch.count
        state.lastCommit = done - started
        state.pace.lastDone = done
      }
    }
    return try ticket.result!.get()
  }

  /// With others about (this write, or others, waited for the last
  /// commit), how many writers the next batch waits a moment for — the
  /// writers of the last batch, about to come back — and how long: at most
  /// half the last commit's time, at most 2 ms. None when as many wait,
  /// or while a batch is in flight (its writers come back only after it).
  private func returningWriters(_ state: State) -> (writers: Int, patience: Duration) {
    guard state.inFlight == 0 else { return (0, .zero) }
    let expected = min(state.waiting.count + state.lastBatch, batchLimit)
    guard state.waiting.count < expected else { return (0, .zero) }
    return (expected, min(state.lastCommit / 2, .milliseconds(2)))
  }
}
