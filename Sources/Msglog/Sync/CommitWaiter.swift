#if canImport(Glibc)
  import Glibc
#endif

/// Waits for the next commit of a log as `follow` does — woken by the
/// store, not by a timer — for at most some seconds, or until told to stop.
final class CommitWaiter: Sendable {
  let log: EventLog
  let after: UInt64
  let stop: @Sendable () -> Bool
  /// Written to end the wait: its read end is the follower's stop.
  private let ends: (read: Int32, write: Int32)
  private let done = Guarded(false)

  init(log: EventLog, after: UInt64, stop: @escaping @Sendable () -> Bool) {
    self.log = log
    self.after = after
    self.stop = stop
    var fds: [Int32] = [-1, -1]
    if pipe(&fds) != 0 { fds = [-1, -1] }
    for fd in fds where fd >= 0 { _ = fcntl(fd, F_SETFD, FD_CLOEXEC) }
    ends = (fds[0], fds[1])
  }

  deinit {
    if ends.read >= 0 { close(ends.read) }
    if ends.write >= 0 { close(ends.write) }
  }

  /// True when an event after `after` committed within `seconds`.
  func wait(seconds: Double) throws -> Bool {
    guard ends.read >= 0 else { throw MsglogError.systemRefused(.wakePipe, errno: errno) }
    let deadline = Deadline.after(seconds: seconds)
    // The timer: ends the follow at the deadline, or when told to stop.
    startThread { [self] in
      while !done.read({ $0 }) && !deadline.hasPassed && !stop() {
        done.wait(until: { $0 }, deadline: .after(seconds: 0.1)) { _, _ in }
      }
      var byte: UInt8 = 1
      _ = write(ends.write, &byte, 1)
    }
    defer { done.update { $0 = true } }
    var arrived = false
    try log.follow(from: after + 1, stop: [FollowStop(fileDescriptor: ends.read, whenReadable: true)]) { _ in
      arrived = true
      return false
    }
    return arrived
  }
}
