#if canImport(Glibc)
  import Glibc
#endif

/// Runs `body` on a thread of its own (a follower blocks in `poll`, which a
/// shared pool's thread must not): the one way this package starts a
/// thread. False when the system would start none (`body` is then not run).
@discardableResult
package func startThread(_ body: @escaping @Sendable () -> Void) -> Bool {
  final class Work: Sendable {
    let body: @Sendable () -> Void
    init(_ body: @escaping @Sendable () -> Void) { self.body = body }
  }
  var thread = pthread_t()
  let work = Unmanaged.passRetained(Work(body)).toOpaque()
  let rc = pthread_create(
    &thread, nil,
    { raw in
      Unmanaged<Work>.fromOpaque(raw!).takeRetainedValue().body()
      return nil
    }, work)
  guard rc == 0 else {
    Unmanaged<Work>.fromOpaque(work).release()
    return false
  }
  pthread_detach(thread)
  return true
}
