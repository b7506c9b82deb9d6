#if canImport(Glibc)
  import Glibc
#endif

/// Writes from many threads of one process, committed together (group
/// commit): while one transaction is in flight, the writes that arrive
/// wait here; when it ends, the first of them commits everything that
/// waited, in one transaction — one lock, one flush, one notification —
/// and hands each write its own outcome.
///
/// No thread waits for company: a write that finds nothing in flight
/// commits at once, alone, so one writer's latency is what it was. The
/// batch is whatever arrived during the last commit, so it grows with the
/// load and a lone writer never pays for it.
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
  private let done: UnsafeMutablePointer<pthread_cond_t>
  private var waiting: [Ticket] = []
  private var committing = false

  init(batchLimit: Int) {
    self.batchLimit = batchLimit
    // pthread objects must not move: memory of their own.
    mutex = .allocate(capacity: 1)
    pthread_mutex_init(mutex, nil)
    done = .allocate(capacity: 1)
    pthread_cond_init(done, nil)
  }

  deinit {
    pthread_cond_destroy(done)
    done.deallocate()
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
    while ticket.result == nil {
      guard !committing else {
        pthread_cond_wait(done, mutex)
        continue
      }
      // Nothing in flight: this thread commits what waits, itself first among them.
      committing = true
      let batch = Array(waiting.prefix(batchLimit))
      waiting.removeFirst(batch.count)
      pthread_mutex_unlock(mutex)
      do {
        try commit(batch)
      } catch {
        for left in batch where left.result == nil { left.result = .failure(error) }
      }
      pthread_mutex_lock(mutex)
      committing = false
      pthread_cond_broadcast(done)
    }
    pthread_mutex_unlock(mutex)
    return try ticket.result!.get()
  }
}
