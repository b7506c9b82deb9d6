#if canImport(Glibc)
  import Glibc
#endif

/// A pipe one thread writes to wake another that waits in `poll(2)`: its
/// read end is a `FollowStop`. Once signalled it stays readable (nothing
/// reads it), so a wait that starts after the signal ends at once.
final class WakePipe: Sendable {
  private let read: Int32
  private let write: Int32

  init() throws(MsglogError) {
    var ends: [Int32] = [-1, -1]
    guard pipe(&ends) == 0 else { throw .systemRefused(.wakePipe, errno: errno) }
    for fd in ends { _ = fcntl(fd, F_SETFD, FD_CLOEXEC) }
    (read, write) = (ends[0], ends[1])
  }

  deinit {
    close(read)
    close(write)
  }

  var stop: FollowStop { FollowStop(fileDescriptor: read, whenReadable: true) }

  func signal() {
    var byte: UInt8 = 1
    _ = Glibc.write(write, &byte, 1)
  }
}

/// Ends a blocking wait for a remote's commits — one that cannot take
/// descriptors of its own, such as a read of a server's event stream —
/// when one of `stops` signals or `seconds` pass: a thread blocked in one
/// `poll(2)` on those descriptors, which then calls `end`. Woken by them
/// or by the time, never by a timer that looks.
final class WaitBound: Sendable {
  private let finished: WakePipe
  private let exited = Guarded(false)

  init(seconds: Double, stops: [FollowStop], end: @escaping @Sendable () -> Void) throws(MsglogError) {
    let finished = try WakePipe()
    self.finished = finished
    let exited = self.exited
    let started = startThread {
      _ = FollowStop.wait(.milliseconds(Int64(seconds * 1000)), unless: [finished.stop] + stops)
      // Time is up or a stop signalled, unless the wait ended by itself.
      if !FollowStop.anySignalled([finished.stop]) { end() }
      exited.update { $0 = true }
    }
    guard started else { throw .systemRefused(.followerThread, errno: nil) }
  }

  /// The wait is over: releases the thread and waits for it to be gone, so
  /// that none of `stops` is polled once the caller closes it.
  func finish() {
    finished.signal()
    exited.wait(until: { $0 }, deadline: nil) { _, _ in }
  }
}
