import Msglog

#if canImport(Glibc)
  import Glibc
#endif

/// Tells the event streams that the log has grown: one follower for the
/// whole server (`EventLog.follow`, woken by the store, never by a timer)
/// publishes the head seq; each stream waits on it in its own thread.
final class CommitHub: Sendable {
  private struct State {
    var head: UInt64 = 0
    var stopping = false
    var followerEnded = true
  }

  private let log: EventLog
  private let state = Guarded(State())
  /// Written to end the follower's `poll`.
  private let stopPipe: (read: Int32, write: Int32)

  init(log: EventLog) throws(ServerError) {
    self.log = log
    var ends: [Int32] = [-1, -1]
    guard pipe(&ends) == 0 else { throw ServerError("cannot make a pipe: \(String(cString: strerror(errno)))") }
    for fd in ends { _ = fcntl(fd, F_SETFD, FD_CLOEXEC) }
    stopPipe = (ends[0], ends[1])
  }

  deinit {
    close(stopPipe.read)
    close(stopPipe.write)
  }

  func start() {
    let head = (try? log.headSeq()) ?? 0
    state.update {
      $0.head = head
      $0.followerEnded = false
    }
    startThread { [self] in
      follow()
      state.update { $0.followerEnded = true }
    }
  }

  private func follow() {
    // A failed follow (the database went away) is retried: the streams
    // would otherwise wait for ever.
    while !isStopping {
      do {
        try log.follow(stop: [FollowStop(fileDescriptor: stopPipe.read, whenReadable: true)]) { event in
          publish(event.seq)
          return true
        }
      } catch {
        state.wait(until: { $0.stopping }, deadline: .after(seconds: 0.2)) { _, _ in }
      }
    }
  }

  var isStopping: Bool { state.read { $0.stopping } }

  private func publish(_ seq: UInt64) {
    state.update { $0.head = max($0.head, seq) }
  }

  /// Waits until the head reaches `seq`, the server stops, or `seconds`
  /// pass; true when the head reached it.
  func wait(for seq: UInt64, seconds: Double) -> Bool {
    state.wait(until: { $0.head >= seq || $0.stopping }, deadline: .after(seconds: seconds)) { state, _ in
      state.head >= seq
    }
  }

  /// Ends the follower and wakes every stream; returns once the follower
  /// has ended.
  func stop() {
    state.update { $0.stopping = true }
    var byte: UInt8 = 1
    _ = write(stopPipe.write, &byte, 1)
    state.wait(until: { $0.followerEnded }) { _, _ in }
  }
}
