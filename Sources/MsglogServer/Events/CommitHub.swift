import Msglog
import MsglogPosix
import Synchronization

#if canImport(Glibc)
  import Glibc
#endif

/// Tells the event streams that the log has grown: one follower of the
/// head for the whole server (`EventLog.followHead`, woken by the store's
/// watcher — on a PostgreSQL primary, also a second after its last
/// notification, to read the head) publishes the head seq, and calls `onAdvance` with it
/// — the server wakes its event loops, which resume the streams parked for
/// that seq. It reads only the head: the streams read the events, so a
/// commit costs the hub one statement on PostgreSQL, not a snapshot of
/// three round trips and a read of every event the commit wrote.
final class CommitHub: @unchecked Sendable {  // `advanced`: set by `start` before the follower's thread exists, then only read there
  private struct State {
    var stopping = false
    var followerEnded = true
  }

  private let log: EventLog
  private let state = Guarded(State())
  private let published = Atomic<UInt64>(0)
  private let stopFlag = Atomic(false)
  /// Called on the follower's thread with each new head.
  private var advanced: (@Sendable (UInt64) -> Void)? = nil
  /// Written to end the follower's `poll`.
  private let stopPipe: WakePipe

  init(log: EventLog) throws(ServerError) {
    self.log = log
    do throws(WakePipe.Failure) {
      stopPipe = try WakePipe()
    } catch {
      throw ServerError("cannot make a pipe: \(String(cString: strerror(error.errno)))")
    }
  }

  /// The last head seen.
  var head: UInt64 { published.load(ordering: .acquiring) }

  var isStopping: Bool { stopFlag.load(ordering: .relaxed) }

  /// Starts the follower; `onAdvance` is called with every new head.
  func start(onAdvance: @escaping @Sendable (UInt64) -> Void) -> Bool {
    advanced = onAdvance
    published.store((try? log.headSeq()) ?? 0, ordering: .releasing)
    state.update { $0.followerEnded = false }
    let started = startThread { [self] in
      follow()
      state.update { $0.followerEnded = true }
    }
    if !started { state.update { $0.followerEnded = true } }
    return started
  }

  private func follow() {
    // The follower survives the store going away (it reconnects and goes
    // on from where it was); anything else that ends it is retried, from
    // the last head published, so no commit waits for a keep-alive.
    while !isStopping {
      do {
        try log.followHead(after: head, stop: [FollowStop(fileDescriptor: stopPipe.readEnd, whenReadable: true)]) {
          seq in
          publish(seq)
          return true
        }
      } catch MsglogError.followedDatabaseDisplaced {
        // No commit of the file it opened will come again (the server
        // refuses writes, /readyz says why): wait to be stopped.
        state.wait(until: { $0.stopping }) { _, _ in }
      } catch {
        state.wait(until: { $0.stopping }, deadline: .after(seconds: 0.2)) { _, _ in }
      }
    }
  }

  private func publish(_ seq: UInt64) {
    guard seq > head else { return }
    published.store(seq, ordering: .releasing)
    advanced?(seq)
  }

  /// Ends the follower; returns once it has ended.
  func stop() {
    stopFlag.store(true, ordering: .relaxed)
    state.update { $0.stopping = true }
    stopPipe.signal()
    state.wait(until: { $0.followerEnded }) { _, _ in }
  }
}
