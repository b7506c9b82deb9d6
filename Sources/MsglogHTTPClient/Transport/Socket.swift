import MsglogPosix
import MsglogTLS

#if canImport(Glibc)
  import Glibc
#endif

/// A connected, non-blocking TCP socket whose every wait ends at its
/// deadline or when the client is cancelled, whichever comes first.
final class Socket {
  let descriptor: Int32
  let origin: String
  let cancellation: Cancellation

  init(descriptor: Int32, origin: String, cancellation: Cancellation) {
    self.descriptor = descriptor
    self.origin = origin
    self.cancellation = cancellation
  }

  deinit { close(descriptor) }

  /// Waits until the socket is ready for `events` (POLLIN, POLLOUT);
  /// throws `.timedOut` once `deadline` passes and `.cancelled` when the
  /// client is cancelled.
  func wait(
    for events: Int16, until deadline: Deadline, phase: HTTPClientError.TimeoutPhase, seconds: Double
  ) throws {
    try Self.wait(descriptor, for: events, until: deadline, cancellation: cancellation) {
      .timedOut(origin: origin, phase: phase, seconds: seconds)
    } cancelled: {
      .cancelled(origin: origin)
    }
  }

  /// `poll` on `descriptor` and the cancellation, at once.
  static func wait(
    _ descriptor: Int32, for events: Int16, until deadline: Deadline, cancellation: Cancellation,
    timedOut: () -> HTTPClientError, cancelled: () -> HTTPClientError
  ) throws {
    while true {
      var pollers = [
        pollfd(fd: descriptor, events: events, revents: 0),
        pollfd(fd: cancellation.descriptor, events: Int16(POLLIN), revents: 0),
      ]
      let ready = poll(&pollers, 2, deadline.remainingMilliseconds)
      if ready < 0 {
        if errno == EINTR { continue }
        preconditionFailure("poll failed: errno \(errno)")
      }
      if pollers[1].revents != 0 { throw cancelled() }
      // An error or hang-up is "ready" too: the read or write says what happened.
      if pollers[0].revents != 0 { return }
      if deadline.hasPassed { throw timedOut() }
    }
  }

  /// Reads what has arrived into `buffer`, waiting at most `idle` seconds
  /// for it; 0 at the end of the stream.
  func receive(into buffer: UnsafeMutableRawBufferPointer, idle: Double) throws -> Int {
    let deadline = Deadline(in: idle)
    while true {
      if cancellation.isRaised { throw HTTPClientError.cancelled(origin: origin) }
      switch SocketCall.receive(descriptor, into: buffer) {
      case .bytes(let count): return count
      case .ended: return 0
      case .wouldBlock: try wait(for: Int16(POLLIN), until: deadline, phase: .answer, seconds: idle)
      case .failed(let code): throw Self.failure(code, origin: origin)
      }
    }
  }

  /// Writes all of `bytes`, waiting at most `idle` seconds each time the
  /// server takes none.
  func send(_ bytes: ArraySlice<UInt8>, idle: Double) throws {
    var rest = bytes
    var deadline = Deadline(in: idle)
    while !rest.isEmpty {
      if cancellation.isRaised { throw HTTPClientError.cancelled(origin: origin) }
      switch rest.withUnsafeBytes({ SocketCall.send(descriptor, $0) }) {
      case .bytes(let count):
        rest = rest.dropFirst(count)
        deadline = Deadline(in: idle)
      case .wouldBlock, .ended:
        try wait(for: Int16(POLLOUT), until: deadline, phase: .answer, seconds: idle)
      case .failed(let code): throw Self.failure(code, origin: origin)
      }
    }
  }

  /// Whether the server has closed the connection (or sent something no
  /// request asked for) while it sat unused: then it must not carry
  /// another request.
  var hasInput: Bool {
    var poller = pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)
    return poll(&poller, 1, 0) != 0
  }

  /// A failed read or write as the caller sees it.
  static func failure(_ code: Int32, origin: String) -> HTTPClientError {
    switch code {
    case ECONNRESET: return .connectionLost(origin: origin, reason: "reset the connection")
    case EPIPE: return .connectionLost(origin: origin, reason: "closed the connection")
    default: return .connectionLost(origin: origin, reason: "broke the connection: " + systemMessage(code))
    }
  }
}

/// `strerror` as messages want it: lowercase, no final period.
func systemMessage(_ code: Int32) -> String {
  lowercasedSentence(String(cString: strerror(code)))
}
