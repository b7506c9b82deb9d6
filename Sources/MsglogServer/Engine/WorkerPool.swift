import Msglog

/// A fixed number of threads that run the handlers and the body producers:
/// a connection never has a thread of its own. A write is queued in the
/// group commit and answered by the thread that commits it (`CommitQueue`),
/// so its worker goes on at once; a write that is not deferred (an erase)
/// still waits in the group commit on its worker, while the batch it waits
/// for is built on a spare thread, never in this pool's queue.
final class WorkerPool: Sendable {
  private struct State {
    var jobs: [@Sendable () -> Void] = []
    var first = 0
    var stopping = false
    var running = 0
    var pending: Int { jobs.count - first }
  }

  /// Jobs waiting at most: past this, a request is answered 503.
  static let queueLimit = 65_536
  private let state = Guarded(State())
  let threads: Int

  /// Starts up to `threads` workers; fewer when the system starts fewer
  /// (at least one, or nil).
  init?(threads: Int) {
    var started = 0
    for _ in 0..<threads {
      guard startThread({ [state] in Self.work(state) }) else { break }
      started += 1
    }
    self.threads = started
    state.update { $0.running = started }
    if started == 0 { return nil }
  }

  private static func work(_ state: Guarded<State>) {
    while true {
      let job: (@Sendable () -> Void)? = state.wait(until: { $0.pending > 0 || $0.stopping }, wakingOthers: false) {
        state, _ in
        guard state.pending > 0 else { return nil }
        let job = state.jobs[state.first]
        state.first += 1
        if state.first == state.jobs.count {
          state.jobs.removeAll(keepingCapacity: true)
          state.first = 0
        } else if state.first >= 1024 {
          state.jobs.removeFirst(state.first)
          state.first = 0
        }
        return job
      }
      guard let job else {
        // Wakes `stop`, which waits for the last worker to end.
        state.update { $0.running -= 1 }
        return
      }
      job()
    }
  }

  /// Queues `job`; false when the queue is full or the pool has stopped.
  func submit(_ job: @escaping @Sendable () -> Void) -> Bool {
    // Only workers wait on `state` while the pool runs (`stop` wakes all).
    state.update(wakingOne: true) { state in
      guard !state.stopping, state.pending < Self.queueLimit else { return false }
      state.jobs.append(job)
      return true
    }
  }

  /// Ends the workers once the jobs under way are done: the queued ones
  /// run first, or, `droppingQueued`, are dropped — once the event loops
  /// have ended no answer of theirs could go anywhere (40 queued 1 s diffs
  /// kept a stopped server running 15 s after its grace).
  func stop(droppingQueued: Bool = false) {
    state.update { state in
      state.stopping = true
      if droppingQueued {
        state.jobs.removeAll()
        state.first = 0
      }
    }
    state.wait(until: { $0.running == 0 }) { _, _ in }
  }
}
