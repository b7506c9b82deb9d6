import MsglogPosix
import Synchronization

#if canImport(Glibc)
  import Glibc
#endif

/// The asynchronous `follow`: hands out events one by one and reads the
/// next batch only when the last is gone, so at most one batch
/// (`FollowCursor.batchSize` events) is ever held, however slow the
/// consumer and however long the log.
///
/// Reading and waiting for commits block, so each round runs on a thread
/// of its own while the consumer's task is suspended; cancelling the task
/// wakes that thread through a pipe and ends the sequence.
package final class LogFollower: Sendable {
  private struct State {
    /// Made at the first `next()`: `from: nil` means after that point.
    var cursor: FollowCursor?
    /// Events read and not handed out yet, in seq order.
    var pending: [Event] = []
    var handedOut = 0
  }

  private let log: EventLog
  private let from: UInt64?
  private let stream: StreamName?
  private let state = Mutex(State())
  /// Signalled when the consuming task is cancelled; polled by the waiting
  /// thread. Nil when the system refused a pipe: the first wait says so.
  private let cancelled: MsglogPosix.WakePipe?

  package init(log: EventLog, from seq: UInt64?, stream: StreamName?) {
    self.log = log
    self.from = seq
    self.stream = stream
    cancelled = try? MsglogPosix.WakePipe()
  }

  /// How many times the store woke it to read: one per commit of a write.
  package var wakes: Int { state.withLock { $0.cursor?.wakes ?? 0 } }

  /// How many events have been read and not handed out: never more than a batch.
  package var held: Int { state.withLock { $0.pending.count - $0.handedOut } }

  /// The next event of the stream followed, waiting for it to be committed;
  /// nil once the consuming task is cancelled.
  package func next() async throws -> Event? {
    while true {
      if let event = takePending() { return event }
      if Task.isCancelled { return nil }
      let found = try await withTaskCancellationHandler {
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Bool, any Error>) in
          let started = startThread {
            continuation.resume(with: Result { () throws(MsglogError) in try self.readOrWait() })
          }
          if !started {
            continuation.resume(throwing: MsglogError.systemRefused(.followerThread, errno: nil))
          }
        }
      } onCancel: {
        cancelled?.signal()
      }
      if !found { return nil }
    }
  }

  private func takePending() -> Event? {
    state.withLock { state in
      guard state.handedOut < state.pending.count else { return nil }
      defer { state.handedOut += 1 }
      return state.pending[state.handedOut]
    }
  }

  /// Reads the next batch that holds events of the stream, waiting for
  /// commits until one does; false when cancelled meanwhile.
  private func readOrWait() throws(MsglogError) -> Bool {
    guard let cancelled else { throw .systemRefused(.followerPipe, errno: nil) }
    return try state.withLock { state throws(MsglogError) -> Bool in
      let cursor: FollowCursor
      if let existing = state.cursor {
        cursor = existing
      } else {
        cursor = try FollowCursor(log: log, from: from, stream: stream)
        state.cursor = cursor
      }
      state.pending.removeAll(keepingCapacity: true)
      state.handedOut = 0
      let stop = [FollowStop(fileDescriptor: cancelled.readEnd, whenReadable: true)]
      while true {
        do throws(MsglogError) {
          while true {
            let (events, read) = try cursor.nextBatch()
            if !events.isEmpty {
              state.pending = events
              return true
            }
            if read < FollowCursor.batchSize { break }
          }
          guard try cursor.waitForCommit(stop: stop) else { return false }
        } catch {
          // The store went away: back off and go on where it was.
          guard try cursor.recover(from: error, stop: stop, notices: nil) else { return false }
        }
      }
    }
  }
}
