import MsglogPosix

#if canImport(Glibc)
  import Glibc
#endif

/// The signal that ends a client's blocked waits from another thread: a
/// wake-up pipe whose read end every wait polls beside its socket. Once
/// raised it stays raised, so a request started after `cancel()` ends at
/// once too.
final class Cancellation: Sendable {
  private let pipe: WakePipe

  init() {
    do throws(WakePipe.Failure) {
      pipe = try WakePipe()
    } catch {
      preconditionFailure("pipe failed: errno \(error.errno)")
    }
  }

  /// Polled: readable once raised.
  var descriptor: Int32 { pipe.readEnd }

  /// Raises it: one write(2), async-signal-safe.
  func raise() { pipe.signal() }

  var isRaised: Bool { pipe.isSignalled }
}
