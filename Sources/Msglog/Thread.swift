#if canImport(Glibc)
  import Glibc
#endif

/// A thread of its own, for work that blocks (a follower waiting in
/// `poll`), which a thread of Swift's shared pool must not do: the one
/// way msglog starts threads.
package struct SpawnedThread: Sendable {
  private let thread: pthread_t

  /// Runs `body` on a new thread; nil (and `body` not run) when the system
  /// has no thread to give. Unless `joinable`, the thread cleans up after
  /// itself when `body` returns; a joinable one must be `join`ed.
  package static func start(joinable: Bool = false, _ body: @escaping @Sendable () -> Void) -> SpawnedThread? {
    final class Work: Sendable {
      let body: @Sendable () -> Void
      init(_ body: @escaping @Sendable () -> Void) { self.body = body }
    }
    let work = Unmanaged.passRetained(Work(body)).toOpaque()
    var thread = pthread_t()
    let started =
      pthread_create(
        &thread, nil,
        { raw in
          Unmanaged<Work>.fromOpaque(raw!).takeRetainedValue().body()
          return nil
        }, work) == 0
    guard started else {
      Unmanaged<Work>.fromOpaque(work).release()
      return nil
    }
    if !joinable { pthread_detach(thread) }
    return SpawnedThread(thread: thread)
  }

  /// Waits for a joinable thread's `body` to return.
  package func join() {
    pthread_join(thread, nil)
  }
}
