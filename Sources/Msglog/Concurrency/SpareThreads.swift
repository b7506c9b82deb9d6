/// Threads for work that must start now and may wait on the store: a
/// parked thread when one is idle, else a new one. Never a queue, where
/// a job could wait behind others — a batch handed off by a thread that
/// may not build it (`CommitQueue`) must not wait behind workers that
/// themselves wait for that batch. A thread parks a while after its job,
/// so that a steady stream of hand-offs reuses a few threads instead of
/// starting one each.
final class SpareThreads: Sendable {
  private struct State {
    var parked = 0
    var jobs: [@Sendable () -> Void] = []
  }

  private let state = Guarded(State())
  /// How long a thread with nothing to do stays parked before it ends.
  static let parkedSeconds = 2.0

  /// Runs `job` on a parked thread, or on a new one. Should the system
  /// start none, the job waits for the next thread to finish its own.
  func run(_ job: @escaping @Sendable () -> Void) {
    let taken = state.update(wakingOne: true) { state in
      guard state.jobs.count < state.parked else { return false }
      state.jobs.append(job)
      return true
    }
    if taken { return }
    if !startThread({ [self] in serve(job) }) { state.update { $0.jobs.append(job) } }
  }

  private func serve(_ first: @escaping @Sendable () -> Void) {
    var job: (@Sendable () -> Void)? = first
    while let current = job {
      current()
      job = state.update { state in
        if !state.jobs.isEmpty { return state.jobs.removeFirst() }
        state.parked += 1
        return nil
      }
      guard job == nil else { continue }
      job = state.wait(
        until: { !$0.jobs.isEmpty }, deadline: .after(seconds: Self.parkedSeconds), wakingOthers: false,
        then: { state, ready in
          state.parked -= 1
          return ready ? state.jobs.removeFirst() : nil
        })
    }
  }
}
