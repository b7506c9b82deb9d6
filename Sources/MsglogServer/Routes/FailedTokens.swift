import Synchronization

#if canImport(Glibc)
  import Glibc
#endif

/// Failed tokens by client address (SPEC "Failures are seen and slowed"):
/// more than `limit` unknown, revoked or expired tokens from one address
/// within `window` seconds, and that address gets 429 with `Retry-After`
/// until the window ends — every other address is served as before, so
/// nobody can lock another out. Memory stays bounded: windows that ended
/// are dropped whenever the table grows past `pruneAt`.
final class FailedTokens: Sendable {
  /// The failed tokens an address may send in a window (SPEC's 20).
  static let limit = 20
  static let window = 60.0
  static let pruneAt = 4096

  /// The failures allowed in a window before the address waits.
  let limit: Int

  init(limit: Int = FailedTokens.limit) { self.limit = limit }

  private struct Window {
    var start: Double
    var failures: Int
  }

  private let windows = Mutex<[String: Window]>([:])

  /// Seconds since an arbitrary start, monotonic.
  static func now() -> Double {
    var time = timespec()
    clock_gettime(CLOCK_MONOTONIC, &time)
    return Double(time.tv_sec) + Double(time.tv_nsec) / 1e9
  }

  /// The whole seconds `client` must wait; nil when it may try.
  func retryAfter(_ client: String, now: Double = now()) -> Int? {
    windows.withLock { windows in
      guard let window = windows[client], now - window.start < Self.window, window.failures > limit else {
        return nil
      }
      // `now` is taken before the lock: another thread may have opened the window after it.
      let elapsed = max(0, now - window.start)
      return max(1, Int((Self.window - elapsed).rounded(.up)))
    }
  }

  /// One more failed token from `client`.
  func failed(_ client: String, now: Double = now()) {
    windows.withLock { windows in
      if windows.count > Self.pruneAt { windows = windows.filter { now - $0.value.start < Self.window } }
      if let window = windows[client], now - window.start < Self.window {
        windows[client]!.failures = window.failures + 1
      } else {
        windows[client] = Window(start: now, failures: 1)
      }
    }
  }
}
