/// Writes from many threads of one process, committed together (group
/// commit): while one transaction is in flight, the writes that arrive
/// wait here; when it ends, the first of them commits everything that
/// waited, in one transaction — one lock, one flush, one notification —
/// and hands each write its own outcome.
///
/// A lone writer never waits: a write that finds nothing in flight and no
/// one else about, when the last batch was a single write too (or ended
/// longer than a commit ago), commits at once, so one writer's latency is
/// what it was. Under load the batch is whatever arrived during the last
/// commit, and the next one waits a moment for the writers of the batch
/// just committed, who are about to come back (at most half the last
/// commit's time, at most 2 ms): otherwise two half-batches would take
/// turns, each paying a whole flush (PostgreSQL's `commit_delay` for the
/// same reason). So does the first of them to come back when it finds the
/// way clear: it is not alone while the batch it was in had others and
/// ended moments ago (committed at once, it took a whole commit for itself
/// while the others gathered behind it: with 16 `serve` clients on
/// PostgreSQL, one batch in eight was a single write).
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
/// A write waits in one of two ways. `submit`'s thread sleeps on its own
/// ticket and is woken once: to build the next batch (the first write
/// waiting, when a batch may be built) or with its outcome. Sixteen
/// writers sharing one condition would each be woken by every arrival,
/// sending and commit — hundreds of wake-ups a batch, which on two cores
/// cost more than the batch's work. `enqueue`'s write has no thread
/// waiting at all: its outcome goes to a completion, called by the thread
/// that committed its batch, and a batch it leads is built by whichever
/// thread finds it due (the arriving one, or the one whose commit just
/// ended) or, when that thread may not build it — it is in the middle of
/// a commit, is a `submit`'s thread whose own write is done, or is an
/// event loop — on a spare thread (`SpareThreads`: never a queue, where
/// the build could wait behind writers waiting for it). A server answers
/// each write from the committing thread this way: no worker sleeps
/// through a commit, and one wake-up answers a whole batch instead of one
/// for each write (a third of `serve`'s time was the kernel switching
/// threads).
final class CommitQueue<Work, Result>: Sendable {
  typealias Outcome = Swift.Result<Result, any Error>
  /// Commits a batch of tickets (see `submit`).
  typealias Commit = ([Ticket], _ sent: () -> Void) throws -> Void

  /// One write waiting for its outcome. Handed between threads only under
  /// the queue's lock; its result is written by the committing thread
  /// before that thread wakes its writer or calls its completion.
  final class Ticket: @unchecked Sendable {
    let work: Work
    /// Set once, by the thread that commits the batch.
    var result: Outcome?
    fileprivate let waiter: Waiter

    fileprivate init(_ work: Work, _ waiter: Waiter) {
      self.work = work
      self.waiter = waiter
    }
  }

  /// How a write waits.
  fileprivate enum Waiter {
    /// `submit`'s thread, asleep until called to build or with its outcome.
    case thread(Guarded<Call>)
    /// `enqueue`'s completion; a batch this write leads is committed with
    /// `commit`, on a spare thread when need be.
    case completion(Deferred)
  }

  fileprivate enum Call { case waiting, build, done }

  /// What an `enqueue`d write carries instead of a waiting thread. Its
  /// closures are called on whichever thread builds or commits the batch
  /// (`enqueue` says so to its caller).
  fileprivate struct Deferred: @unchecked Sendable {
    let commit: Commit
    let done: (Outcome) -> Void
  }

  /// The most writes one transaction takes (more wait for the next one).
  let batchLimit: Int
  /// Only the thread gathering a batch waits on it, for writes to arrive.
  private let state = Guarded(State())
  /// Where a batch goes when the thread that finds it due may not build it.
  private let spare = SpareThreads()

  private struct State {
    var waiting: [Ticket] = []
    /// Whether a batch is being built (taken, not yet sent): one at a time.
    var building = false
    /// Batches sent and not yet committed (or failed).
    var inFlight = 0
    /// The writes of the last batch sent: the next is built behind it
    /// only once as many wait.
    var sentWrites = 0
    /// The size, duration and end of the last batch committed.
    var lastBatch = 0
    var lastCommit: Duration = .zero
    var lastEnded: ContinuousClock.Instant? = nil
    /// Batches built while another was in flight, since the start.
    var overlapped = 0
    /// How many writes the thread gathering a batch waits for (`Int.max`
    /// while none gathers): an arriving write wakes it only once as many
    /// wait — woken by each arrival, it would sleep again fifteen times a
    /// batch of sixteen.
    var gatheringFor = Int.max
    /// Batches that waited for returning writers until the patience ran
    /// out (short of them, or not woken when they came), since the start.
    var waitedOut = 0

    /// Whether as many writes wait as the batch being gathered waits for.
    var gathered: Bool { waiting.count >= gatheringFor }

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

  /// How many batches waited out their patience for returning writers
  /// (tests show with it that the queue expects the writers there are, and
  /// is woken when they have come).
  var waitedOut: Int { state.read { $0.waitedOut } }

  /// Queues `work` and returns its outcome once committed. `commit` is
  /// called with a batch of tickets (this one among them, in arrival
  /// order) by whichever thread commits it, and must give every ticket its
  /// result; what it throws becomes the result of those it left without.
  /// It may call `sent` (once, before it returns) when the batch's commit
  /// is on its way and the next batch may be built on the state it leaves.
  func submit(_ work: Work, commit: Commit) throws -> Result {
    let call = Guarded(Call.waiting)
    let ticket = Ticket(work, .thread(call))
    // Arriving wakes the thread gathering a batch, if there is one and as
    // many writes wait as it waits for, and may let the next batch be
    // built (by this write, or the first waiting).
    let builder = state.update(wakingIf: \.gathered) { state in
      state.waiting.append(ticket)
      return Self.callBuilder(&state)
    }
    if let builder, builder === ticket {
      build(led: ticket, arrived: true, own: ticket, commit: commit)
    } else {
      if let builder { hand(builder, buildingHere: false) }
      let called = call.wait(until: { $0 != .waiting }, wakingOthers: false) { call, _ in call }
      if called == .build { build(led: ticket, arrived: false, own: ticket, commit: commit) }
    }
    return try ticket.result!.get()
  }

  /// Queues `work` and returns at once; `done` is called with its outcome,
  /// on the thread that commits its batch — this one, when it finds a
  /// batch due and builds it (then only after that commit and, while
  /// writes keep waiting, the ones after it), unless `buildingHere` is
  /// false (an event loop, which must never wait for the store): a spare
  /// thread then builds it. `commit` is as `submit`'s (escaping: another
  /// thread may build a batch this write leads).
  ///
  /// - Warning: `done` runs on the committing thread, perhaps while it
  ///   holds the next batch to build: it must hand its answer on (to an
  ///   event loop, a waiting thread) and never write to the log itself — a
  ///   `submit` there would wait for a batch only this thread builds.
  func enqueue(
    _ work: Work, commit: @escaping Commit, buildingHere: Bool = true, then done: @escaping (Outcome) -> Void
  ) {
    let ticket = Ticket(work, .completion(Deferred(commit: commit, done: done)))
    let builder = state.update(wakingIf: \.gathered) { state in
      state.waiting.append(ticket)
      return Self.callBuilder(&state)
    }
    guard let builder else { return }
    if buildingHere && builder === ticket {
      build(led: ticket, arrived: true, own: nil, commit: commit)
    } else {
      hand(builder, buildingHere: buildingHere, arrived: builder === ticket)
    }
  }

  /// Sees that the batch `leader` leads (marked building) is built: its
  /// sleeping thread woken, or an `enqueue`d one's built here — when this
  /// thread has nothing of its own to do (`buildingHere`) — or on a spare
  /// thread. `arrived`: the leader just arrived and found the way clear.
  private func hand(_ leader: Ticket, buildingHere: Bool, arrived: Bool = false) {
    switch leader.waiter {
    case .thread(let call):
      call.update { $0 = .build }
    case .completion(let deferred) where buildingHere:
      build(led: leader, arrived: arrived, own: nil, commit: deferred.commit)
    case .completion(let deferred):
      spare.run { [self] in build(led: leader, arrived: arrived, own: nil, commit: deferred.commit) }
    }
  }

  /// Gathers the batch `leader` leads and commits it on this thread, then
  /// gives every write its outcome, and builds the batches found due after
  /// it while this thread is free (an `enqueue`d leader's). `arrived`: the
  /// leader just arrived and found the way clear (a lone writer does not
  /// wait for others). `own`: this thread's own `submit` ticket, neither
  /// woken nor — after its commit — kept waiting for others' batches.
  private func build(led leader: Ticket, arrived: Bool, own: Ticket?, commit: Commit) {
    var due = commitBatch(led: leader, arrived: arrived, own: own, commit: commit)
    while let leader = due, case .completion(let deferred) = leader.waiter {
      // This thread's own write is done: another thread builds what is due.
      if own != nil { return hand(leader, buildingHere: false) }
      due = commitBatch(led: leader, arrived: false, own: nil, commit: deferred.commit)
    }
  }

  /// One batch: gathered, committed, each write told its outcome. Returns
  /// the leader of the next batch when one is due and must be built by
  /// `build`; a sleeping thread due to build it is woken here.
  private func commitBatch(led leader: Ticket, arrived: Bool, own: Ticket?, commit: Commit) -> Ticket? {
    // Noted under the lock, so that the writes arriving from now on know
    // how many must wait before they wake this thread.
    let gathering = state.update(wakingIf: { _ in false }) { state in
      let gathering = returningWriters(state, arrived: arrived, at: .now)
      state.gatheringFor = gathering.writers
      return gathering
    }
    let deadline = Deadline.after(gathering.patience)
    let batch = state.wait(
      until: \.gathered, deadline: deadline, wakingOthers: false,
      then: { state, _ in
        state.gatheringFor = .max
        if gathering.writers > 0 && deadline.hasPassed { state.waitedOut += 1 }
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
      if let next { hand(next, buildingHere: false) }
    }
    do {
      try commit(batch, markSent)
    } catch {
      for left in batch where left.result == nil { left.result = .failure(error) }
    }
    let done = ContinuousClock.now
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
      state.lastEnded = done
      return Self.callBuilder(&state)
    }
    // A sleeping builder starts at once, while the outcomes go out.
    var due = next
    if let next, case .thread(let call) = next.waiter {
      call.update { $0 = .build }
      due = nil
    }
    for ticket in batch where ticket !== own {
      switch ticket.waiter {
      case .thread(let call): call.update { $0 = .done }
      case .completion(let deferred): deferred.done(ticket.result!)
      }
    }
    return due
  }

  /// When a batch may be built now, the write that leads it — the first
  /// waiting, which this marks building (its batch is then handed to a
  /// thread: `hand`); nil when none may or none waits.
  private static func callBuilder(_ state: inout State) -> Ticket? {
    guard state.mayBuild, let first = state.waiting.first else { return nil }
    state.building = true
    if state.inFlight > 0 { state.overlapped += 1 }
    return first
  }

  /// With others about, how many writers the next batch waits a moment
  /// for — the writers of the last batch, about to come back — and how
  /// long: at most half the last commit's time, at most 2 ms. None when as
  /// many wait, or while a batch is in flight (its writers come back only
  /// after it). A write that `arrived` to find the way clear is the first
  /// of the last batch's writers back when that batch had others in it and
  /// ended less than a commit's time ago, and waits for the rest — the
  /// batch counted once, whoever already waits beside it (gathered on a
  /// spare thread, it finds some); otherwise, with no one else waiting, it
  /// is alone and waits for no one.
  private func returningWriters(_ state: State, arrived: Bool, at now: ContinuousClock.Instant) -> (
    writers: Int, patience: Duration
  ) {
    guard state.inFlight == 0 else { return (0, .zero) }
    let expected: Int
    let returning = state.lastBatch > 1 && state.lastEnded.map { now - $0 < state.lastCommit } == true
    if arrived && returning {
      // The first of the last batch back, perhaps gathered on a spare
      // thread with others of that batch already waiting beside it: they
      // are of the same batch, not more writers to count on top of it.
      expected = min(state.lastBatch, batchLimit)
    } else if arrived && state.waiting.count <= 1 {
      return (0, .zero)
    } else {
      // A batch's leader with others waiting: after a commit, or one that
      // arrived to find the way clear and was joined while its thread got
      // going, back later than a commit's time — most likely the last
      // batch's writers still, so it too waits a moment for the rest
      // (committing at once with those few split `serve`'s batches: 0.49-
      // 0.62x pgbench INSERT in five runs, against 0.51-0.56x in three).
      expected = min(state.waiting.count + state.lastBatch, batchLimit)
    }
    guard state.waiting.count < expected else { return (0, .zero) }
    return (expected, min(state.lastCommit / 2, .milliseconds(2)))
  }
}
