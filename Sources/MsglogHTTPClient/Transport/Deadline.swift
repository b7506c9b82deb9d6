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

  /// What is left, in seconds; 0 once past.
  var remainingSeconds: Double {
    let now = Self.now()
    return nanoseconds > now ? Double(nanoseconds - now) / 1e9 : 0
  }
}

/// The bound on one whole exchange (`HTTPRequest.exchangeTimeout`): every
/// wait of it — to connect, to send, for each byte of the answer — ends by
/// then, however steadily the server trickles.
struct ExchangeDeadline {
  let deadline: Deadline
  /// The bound as it was given, for the message.
  let seconds: Double

  init(_ seconds: Double) {
    deadline = Deadline(in: seconds)
    self.seconds = seconds
  }

  /// The longest a wait of `idle` seconds may now take.
  func shorten(_ idle: Double) -> Double { min(idle, deadline.remainingSeconds) }

  var hasPassed: Bool { deadline.hasPassed }

  func timedOut(_ origin: String) -> HTTPClientError { .timedOut(origin: origin, phase: .exchange, seconds: seconds) }

  /// Runs a wait cut short by this deadline; its time-out, when the
  /// deadline is what passed, is the exchange's.
  func bounding<R>(_ origin: String, _ wait: () throws -> R) throws -> R {
    if hasPassed { throw timedOut(origin) }
    do {
      return try wait()
    } catch HTTPClientError.timedOut(_, _, _) where hasPassed {
      throw timedOut(origin)
    }
  }
}
