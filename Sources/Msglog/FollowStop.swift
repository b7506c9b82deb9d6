#if canImport(Glibc)
  import Glibc
#endif

/// A file descriptor that ends a blocking `follow` or `syncLive` when it signals.
///
/// Why a descriptor, in the door: the follower blocks in `poll(2)` on the
/// store's own descriptor (inotify on LMDB's data file, the PostgreSQL
/// connection's socket), and a stop is one more descriptor in the same
/// call — no thread, timer or wake-up is needed to end it, and what ends a
/// command-line follower can only be a descriptor: a signal handler may do
/// no more than write a byte to a pipe (the self-pipe), and a reader that
/// went away is seen as stdout hanging up. An app that follows from a task
/// uses the asynchronous `follow(from:stream:)` (or `syncLive(options:notices:)`)
/// and cancels the task instead.
public struct FollowStop: Sendable {
  public var fileDescriptor: Int32
  /// Readable (a self-pipe of signal handlers, a cancellation pipe), or
  /// only hung up (stdout: its reader went away; a terminal may also be readable).
  public var whenReadable: Bool

  public init(fileDescriptor: Int32, whenReadable: Bool) {
    self.fileDescriptor = fileDescriptor
    self.whenReadable = whenReadable
  }

  /// Waits `delay` (nil: for ever) unless one of `stops` signals first:
  /// false when one did. Blocks in one `poll(2)`, woken by the descriptors
  /// or the time only.
  static func wait(_ delay: Duration?, unless stops: [FollowStop]) -> Bool {
    var fds = stops.map { pollfd(fd: $0.fileDescriptor, events: $0.whenReadable ? Int16(POLLIN) : 0, revents: 0) }
    let deadline = delay.map { Deadline.after($0) }
    while true {
      let timeout = deadline.map { $0.millisecondsLeft } ?? -1
      let ready = poll(&fds, nfds_t(fds.count), timeout)
      if ready > 0, fds.contains(where: { $0.revents != 0 }) { return false }
      if ready < 0, errno != EINTR { return true }
      if let deadline, deadline.hasPassed { return true }
    }
  }

  /// Whether one of `stops` has signalled, without waiting.
  static func anySignalled(_ stops: [FollowStop]) -> Bool {
    !wait(.zero, unless: stops)
  }
}
