#if canImport(Glibc)
  import Glibc
#endif

/// A moment on the monotonic clock by which a wait must end: a wall-clock
/// step (NTP, a suspended laptop) neither cuts a wait short nor stretches it.
struct Deadline {
  private let nanoseconds: UInt64

  private static func now() -> UInt64 {
    var time = timespec()
    clock_gettime(CLOCK_MONOTONIC, &time)
    return UInt64(time.tv_sec) * 1_000_000_000 + UInt64(time.tv_nsec)
  }

  /// `seconds` from now.
  init(in seconds: Double) {
    nanoseconds = Self.now() &+ UInt64(max(0, seconds) * 1e9)
  }

  /// What is left, in whole milliseconds for `poll` (rounded up, so a
  /// wait never ends just before its deadline and spins); 0 once past.
  var remainingMilliseconds: Int32 {
    let now = Self.now()
    guard nanoseconds > now else { return 0 }
    return Int32(min(UInt64(Int32.max), (nanoseconds - now + 999_999) / 1_000_000))
  }

  var hasPassed: Bool { Self.now() >= nanoseconds }
}
