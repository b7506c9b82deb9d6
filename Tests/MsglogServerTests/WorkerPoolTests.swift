import Synchronization
import Testing

@testable import MsglogServer

#if canImport(Glibc)
  import Glibc
#endif

/// The pool that runs handlers: stopped after the event loops ended, what
/// is still queued is dropped (nobody is left to answer), and only the jobs
/// under way are waited for — 40 queued 1 s diffs kept a stopped server
/// running 15 s past its grace.
@Suite struct WorkerPoolTests {
  @Test func aStopAfterTheLoopsDropsWhatIsQueued() throws {
    let pool = try #require(WorkerPool(threads: 1))
    let ran = Atomic(0)
    let started = Atomic(false)
    #expect(
      pool.submit {
        started.store(true, ordering: .relaxed)
        usleep(200_000)
        ran.add(1, ordering: .relaxed)
      })
    for _ in 0..<20 { #expect(pool.submit { ran.add(1, ordering: .relaxed) }) }
    while !started.load(ordering: .relaxed) { usleep(1_000) }
    pool.stop(droppingQueued: true)
    #expect(ran.load(ordering: .relaxed) == 1, "\(ran.load(ordering: .relaxed)) jobs ran")
    #expect(!pool.submit {})
  }

  @Test func aStopRunsWhatIsQueuedByDefault() throws {
    let pool = try #require(WorkerPool(threads: 1))
    let ran = Atomic(0)
    for _ in 0..<20 { #expect(pool.submit { ran.add(1, ordering: .relaxed) }) }
    pool.stop()
    #expect(ran.load(ordering: .relaxed) == 20)
  }
}
