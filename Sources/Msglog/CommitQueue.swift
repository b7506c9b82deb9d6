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
/// most one batch in flight while the next is built. A batch built early
/// must not be a small one: its writers pay a whole flush, and the writers
/// of the batch in flight, who come back when it is done, cannot join it,
/// so early batches taken with whatever waits halve the batches and cost
/// more than the overlap saves (16 writers on PostgreSQL on two cores:
/// 7 writes a batch, a quarter of them alone, 0.6× the appends a second
/// of waiting). So the next batch is built early only once as many writes
/// wait as the batch in flight holds (`State.mayBuild`); short of that, it
/// is built when that batch is done, with everything that waits by then.
///
/// Each write's thread sleeps on its own ticket and is woken once: to
/// build the next batch (the first write waiting, when a batch may be
/// built) or with its outcome. Sixteen writers sharing one condition
/// would each be woken by every arrival, sending and commit — hundreds of
/// wake-ups a batch, which on two cores cost more than the batch's work.
final class CommitQueue<Work, Result>: Sendable {
  /// One write waiting for its outcome.
  final class Ticket {
    let work: Work
    /// Set once, by the thread that commits the batch.
    var result: Swift.Result<Result, any Error>?
    /// What its thread waits for: to be called to build, or its outcome.
    fileprivate let call = Guarded(Call.waiting)

    init(_ work: Work) { self.work = work }
  }

  fileprivate enum Call { case waiting, build, done }

  /// The most writes one transaction takes (more wait for the next one).
  let batchLimit: Int
  /// Only the thread gathering a batch waits on it, for writes to arrive.
  private let state = Guarded(State())

  private struct State {
    var waiting: [Ticket] = []
    /// Whether a batch is being built (taken, not yet sent): one at a time.
    var building = false
    /// Batches sent and not yet committed (or failed).
    var inFlight = 0
    /// The writes of the last batch sent: the next is built behind it
    /// only once as many wait.
    var sentWrites = 0
    /// The size and duration of the last batch committed.
    var lastBatch = 0
    var lastCommit: Duration = .zero
    /// Batches built while another was in flight, since the start.
    var overlapped = 0

    /// Whether the next batch may be built now: when none is in flight,
    /// or behind the one in flight once as many writes wait as it holds.
    var mayBuild: Bool {
      !building && (inFlight == 0 || (inFlight == 1 && waiting.count >= sentWrites))
    }
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
    // Arriving wakes the thread gathering a batch, if there is one, and
    // may let the next batch be built (by this write, or the first waiting).
    let builder = state.update { state in
      state.waiting.append(ticket)
      return Self.callBuilder(&state)
    }
    let builds = builder === ticket
    if let builder, !builds { builder.call.update { $0 = .build } }
    if !builds {
      let call = ticket.call.wait(until: { $0 != .waiting }, wakingOthers: false) { call, _ in call }
      guard call == .build else { return try ticket.result!.get() }
    }
    // This thread commits what waits, this write first among them.
    let gathering = state.read { state in
      !builds || state.waiting.count > 1 ? returningWriters(state) : (0, .zero)
    }
    let batch = state.wait(
      until: { $0.waiting.count >= gathering.writers }, deadline: .after(gathering.patience), wakingOthers: false,
      then: { state, _ in
        let batch = Array(state.waiting.prefix(batchLimit))
        state.waiting.removeFirst(batch.count)
        return batch
      })
    let started = ContinuousClock.now
    var sent = false
    func markSent() {
      guard !sent else { return }
      sent = true
      let next = state.update { state in
        state.building = false
        state.inFlight += 1
        state.sentWrites = batch.count
        return Self.callBuilder(&state)
      }
      next?.call.update { $0 = .build }
    }
    do {
      try commit(batch, markSent)
    } catch {
      for left in batch where left.result == nil { left.result = .failure(error) }
    }
    let done = ContinuousClock.now
    for other in batch where other !== ticket { other.call.update { $0 = .done } }
    let next = state.update { state in
      if sent {
        state.inFlight -= 1
      } else {
        // Committed where it ran (or failed before it was sent): the
        // next batch is built only now.
        state.building = false
      }
      state.lastBatch = batch.count
      state.lastCommit = done - started
      return Self.callBuilder(&state)
    }
    next?.call.update { $0 = .build }
    return try ticket.result!.get()
  }

  /// When a batch may be built now, the write that builds it — the first
  /// waiting, which this marks building (its thread is then called, or,
  /// just arrived, goes on to build); nil when none may or none waits.
  private static func callBuilder(_ state: inout State) -> Ticket? {
    guard state.mayBuild, let first = state.waiting.first else { return nil }
    state.building = true
    if state.inFlight > 0 { state.overlapped += 1 }
    return first
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
