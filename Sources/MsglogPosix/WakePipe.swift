#if canImport(Glibc)
  import Glibc
#endif

/// A self-pipe: one thread — or a signal handler — signals it, another
/// that waits in `poll(2)` on `readEnd` (beside a socket, the store's
/// descriptor) wakes. Once signalled it stays readable (nothing reads the
/// byte), so a wait that starts after the signal ends at once too.
///
/// The one primitive behind the client's cancellation, the server's
/// commit follower's stop, the command line's signal pipe and a task's
/// cancel pipe: both ends close-on-exec and non-blocking (a signal handler
/// must never block on a full pipe), and making one fails in one way —
/// with the errno — for the caller to word.
package final class WakePipe: Sendable {
  /// Readable once signalled: poll it for `POLLIN`.
  package let readEnd: Int32
  private let writeEnd: Int32

  /// The system refused a pipe (its errno: EMFILE, ENFILE).
  package struct Failure: Error, Equatable {
    package let errno: Int32
  }

  package init() throws(Failure) {
    var ends: [Int32] = [-1, -1]
    guard pipe(&ends) == 0 else { throw Failure(errno: errno) }
    for end in ends {
      _ = fcntl(end, F_SETFD, FD_CLOEXEC)
      _ = fcntl(end, F_SETFL, fcntl(end, F_GETFL) | O_NONBLOCK)
    }
    (readEnd, writeEnd) = (ends[0], ends[1])
  }

  deinit {
    close(readEnd)
    close(writeEnd)
  }

  /// Signals it: one write(2), async-signal-safe.
  package func signal() { Self.signal(writeEnd) }

  /// Signals the pipe whose write end is `descriptor`, from a signal
  /// handler (which can reach no object, only a global descriptor).
  package static func signal(_ descriptor: Int32) {
    var byte: UInt8 = 1
    _ = write(descriptor, &byte, 1)
  }

  /// The write end, for a signal handler to pass to `signal(_:)`; the
  /// pipe must outlive the handler.
  package var descriptorToSignal: Int32 { writeEnd }

  /// Whether it has been signalled, without waiting.
  package var isSignalled: Bool {
    var poller = pollfd(fd: readEnd, events: Int16(POLLIN), revents: 0)
    return poll(&poller, 1, 0) > 0
  }
}
