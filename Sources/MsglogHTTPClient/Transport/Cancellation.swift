#if canImport(Glibc)
  import Glibc
#endif

/// The signal that ends a client's blocked waits from another thread: a
/// pipe whose read end every wait polls beside its socket. Once raised it
/// stays raised (nothing ever reads the byte), so a request started after
/// `cancel()` ends at once too.
final class Cancellation: Sendable {
  /// Polled: readable once raised.
  let descriptor: Int32
  private let writeEnd: Int32

  init() {
    var ends: [Int32] = [0, 0]
    precondition(pipe(&ends) == 0, "pipe failed: errno \(errno)")
    for end in ends {
      _ = fcntl(end, F_SETFD, FD_CLOEXEC)
      _ = fcntl(end, F_SETFL, fcntl(end, F_GETFL) | O_NONBLOCK)
    }
    descriptor = ends[0]
    writeEnd = ends[1]
  }

  deinit {
    close(descriptor)
    close(writeEnd)
  }

  /// Raises it: one write(2), async-signal-safe.
  func raise() {
    var one: UInt8 = 1
    _ = write(writeEnd, &one, 1)
  }

  var isRaised: Bool {
    var poller = pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)
    return poll(&poller, 1, 0) > 0
  }
}
