import Foundation

/// Runs `body(0)`, …, `body(count - 1)` at once, each on a thread of its
/// own, and returns when all have returned.
///
/// Not `DispatchQueue.concurrentPerform`, nor the global queue: on Linux
/// they run about as many closures at a time as there are cores, so on a
/// 2-core machine "16 writers" would be two at a time.
public func onThreads(_ count: Int, _ body: @escaping @Sendable (Int) -> Void) {
  let finished = DispatchSemaphore(value: 0)
  for n in 0..<count {
    let thread = Thread {
      body(n)
      finished.signal()
    }
    thread.stackSize = 1 << 20
    thread.start()
  }
  for _ in 0..<count { finished.wait() }
}
