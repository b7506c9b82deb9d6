#if canImport(Glibc)
  import Glibc
#endif

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
final class CommitQueue<Work, Result>: @unchecked Sendable {  // its state is read and written under `mutex`
  /// One write waiting for its outcome.
  final class Ticket {
    let work: Work
    /// Set once, by the thread that commits the batch.
    var result: Swift.Result<Result, any Error>?

    init(_ work: Work) { self.work = work }
  }

  /// The most writes one transaction takes (more wait for the next one).
  let batchLimit: Int
  private let mutex: UnsafeMutablePointer<pthread_mutex_t>
  /// Signalled when a batch is committed, and when a write arrives.
  private let changed: UnsafeMutablePointer<pthread_cond_t>
  private var waiting: [Ticket] = []
  private var committing = false
  /// The size and duration of the last batch committed.
  private var lastBatch = 0
  private var lastCommit: Duration = .zero

  init(batchLimit: Int) {
    self.batchLimit = batchLimit
    // pthread objects must not move: memory of their own.
    mutex = .allocate(capacity: 1)
    pthread_mutex_init(mutex, nil)
    changed = .allocate(capacity: 1)
    var attributes = pthread_condattr_t()
    pthread_condattr_init(&attributes)
    pthread_condattr_setclock(&attributes, CLOCK_MONOTONIC)
    pthread_cond_init(changed, &attributes)
    pthread_condattr_destroy(&attributes)
  }

  deinit {
    pthread_cond_destroy(changed)
    changed.deallocate()
    pthread_mutex_destroy(mutex)
    mutex.deallocate()
  }

  /// Queues `work` and returns its outcome once committed. `commit` is
  /// called with a batch of tickets (this one among them, in arrival
  /// order) by whichever thread commits it, and must give every ticket its
  /// result; what it throws becomes the result of those it left without.
  func submit(_ work: Work, commit: ([Ticket]) throws -> Void) throws -> Result {
    let ticket = Ticket(work)
    pthread_mutex_lock(mutex)
    waiting.append(ticket)
    pthread_cond_broadcast(changed)
    var waited = false
    while ticket.result == nil {
      guard !committing else {
        waited = true
        pthread_cond_wait(changed, mutex)
        continue
      }
      // Nothing in flight: this thread commits what waits, itself first among them.
      committing = true
      if waited || waiting.count > 1 { gatherReturningWriters() }
      let batch = Array(waiting.prefix(batchLimit))
      waiting.removeFirst(batch.count)
      pthread_mutex_unlock(mutex)
      let started = ContinuousClock.now
      do {
        try commit(batch)
      } catch {
        for left in batch where left.result == nil { left.result = .failure(error) }
      }
      let took = ContinuousClock.now - started
      pthread_mutex_lock(mutex)
      lastBatch = batch.count
      lastCommit = took
      committing = false
      pthread_cond_broadcast(changed)
    }
    pthread_mutex_unlock(mutex)
    return try ticket.result!.get()
  }

  /// With others about (this write, or others, waited for the last
  /// commit), waits a moment for the writers of the last batch to come
  /// back, so that the next batch takes them too. Called with `mutex` held.
  private func gatherReturningWriters() {
    let expected = min(waiting.count + lastBatch, batchLimit)
    guard waiting.count < expected else { return }
    let patience = min(lastCommit / 2, .milliseconds(2))
    var now = timespec()
    clock_gettime(CLOCK_MONOTONIC, &now)
    let (seconds, attoseconds) = patience.components
    var nanoseconds = Int(now.tv_nsec) + Int(attoseconds / 1_000_000_000)
    var deadline = timespec(tv_sec: now.tv_sec + Int(seconds) + nanoseconds / 1_000_000_000, tv_nsec: 0)
    nanoseconds %= 1_000_000_000
    deadline.tv_nsec = nanoseconds
    while waiting.count < expected {
      if pthread_cond_timedwait(changed, mutex, &deadline) == ETIMEDOUT { break }
    }
  }
}
