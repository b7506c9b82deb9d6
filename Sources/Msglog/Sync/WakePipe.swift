#if canImport(Glibc)
  import Glibc
#endif

import MsglogPosix

/// The shared self-pipe (`MsglogPosix.WakePipe`) as the library uses it:
/// made with its failure worded as the library's, and its read end a
/// `FollowStop` for `FollowStop.wait`.
extension MsglogPosix.WakePipe {
  static func made() throws(MsglogError) -> MsglogPosix.WakePipe {
    do { return try MsglogPosix.WakePipe() } catch { throw .systemRefused(.wakePipe, errno: error.errno) }
  }

  var stop: FollowStop { FollowStop(fileDescriptor: readEnd, whenReadable: true) }
}

/// Ends a blocking wait for a remote's commits — one that cannot take
/// descriptors of its own, such as a read of a server's event stream —
/// when one of `stops` signals or `seconds` pass: a thread blocked in one
/// `poll(2)` on those descriptors, which then calls `end`. Woken by them
/// or by the time, never by a timer that looks.
final class WaitBound: Sendable {
  private let finished: MsglogPosix.WakePipe
  private let exited = Guarded(false)

  /// `grace`: after a stop, what is under way has this many seconds more
  /// to end by itself before `end` is called.
  init(seconds: Double, stops: [FollowStop], grace: Double = 0, end: @escaping @Sendable () -> Void)
    throws(MsglogError)
  {
    let finished = try MsglogPosix.WakePipe.made()
    self.finished = finished
    let exited = self.exited
    let started = startThread {
      _ = FollowStop.wait(.milliseconds(Int64(seconds * 1000)), unless: [finished.stop] + stops)
      if grace > 0, FollowStop.anySignalled(stops) {
        _ = FollowStop.wait(.milliseconds(Int64(grace * 1000)), unless: [finished.stop])
      }
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
