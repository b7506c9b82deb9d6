#if canImport(Glibc)
  import Glibc
#endif

/// Runs `body` on a thread of its own (a follower blocks in `poll`, which a
/// shared pool's thread must not).
func startThread(_ body: @escaping @Sendable () -> Void) {
  final class Box: @unchecked Sendable {
    let body: @Sendable () -> Void
    init(_ body: @escaping @Sendable () -> Void) { self.body = body }
  }
  var thread = pthread_t()
  let box = Unmanaged.passRetained(Box(body)).toOpaque()
  let rc = pthread_create(
    &thread, nil,
    { raw in
      let box = Unmanaged<Box>.fromOpaque(raw!).takeRetainedValue()
      box.body()
      return nil
    }, box)
  if rc == 0 {
    pthread_detach(thread)
  } else {
    Unmanaged<Box>.fromOpaque(box).release()
    body()
  }
}
