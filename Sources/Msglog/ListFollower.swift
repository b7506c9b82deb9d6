import MsglogPosix
import Synchronization

#if canImport(Glibc)
  import Glibc
#endif

/// `updates(from:)`: a stream's list as an app shows it, followed. Woken by
/// the store as `follow` is (inotify on LMDB, `LISTEN` on PostgreSQL), by
/// every commit — a replica's pending write, a sync's push and pull, another
/// process's write — and reading, at each wake, what the list is now.
///
/// An update is the difference between two states of the list
/// (`ListChange.changes`), never the history between them: a message
/// removed and brought back meanwhile is not in it, a pending item
/// confirmed by a sync is an update of it, a refused change is undone. The
/// new state is read from the events when neither the list it starts from
/// nor the list now holds a pending change of the stream (a log that is
/// not a replica, or a replica with nothing pending there: the events are
/// the whole story, and cheaper to read than the list); otherwise — and at
/// the first read, which starts from whatever list the app passed, and
/// after a trim dropped events since the list shown — by reading the list.
///
/// Each round runs on a thread of its own while the consumer's task is
/// suspended; cancelling the task wakes that thread through a pipe and ends
/// the sequence.
package final class ListFollower: Sendable {
  private struct State {
    /// Made at the first `next()`.
    var cursor: FollowCursor?
    /// The list as the last update left it.
    var shown: StreamContents
    /// Whether the stream had pending changes when last read; nil before
    /// the first read.
    var pendingHere: Bool?
  }

  /// What one read found.
  private enum Read {
    /// The stream's events since the list shown, as changes, with the head
    /// and the stream's version after them.
    case events([ListChange], seq: UInt64, version: UInt64, pendingHere: Bool)
    /// The list now, to diff.
    case list(StreamContents, pendingHere: Bool)
  }

  /// Past this many events of the stream, one read of the list is cheaper.
  static let eventLimit = 1024

  private let log: EventLog
  private let state: Mutex<State>
  /// Signalled when the consuming task is cancelled; polled by the waiting
  /// thread. Nil when the system refused a pipe: the first wait says so.
  private let cancelled: MsglogPosix.WakePipe?

  package init(log: EventLog, from shown: StreamContents) {
    self.log = log
    state = Mutex(State(shown: shown))
    cancelled = try? MsglogPosix.WakePipe()
  }

  /// The next update of the list, waiting for one; nil once the consuming
  /// task is cancelled.
  package func next() async throws -> ListUpdate? {
    if Task.isCancelled { return nil }
    return try await withTaskCancellationHandler {
      try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<ListUpdate?, any Error>) in
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
  }

  /// Reads the list until it changed, waiting for commits between reads;
  /// nil when cancelled meanwhile.
  private func readOrWait() throws(MsglogError) -> ListUpdate? {
    guard let cancelled else { throw .systemRefused(.followerPipe, errno: nil) }
    return try state.withLock { state throws(MsglogError) -> ListUpdate? in
      let cursor: FollowCursor
      if let existing = state.cursor {
        cursor = existing
      } else {
        cursor = try FollowCursor(log: log, from: state.shown.seq + 1, stream: state.shown.stream)
        state.cursor = cursor
      }
      let stop = [FollowStop(fileDescriptor: cancelled.readEnd, whenReadable: true)]
      while true {
        do throws(MsglogError) {
          try cursor.prepareToRead()
          let update = try read(&state)
          cursor.readSucceeded()
          if let update { return update }
          guard try cursor.waitForCommit(stop: stop) else { return nil }
        } catch {
          // The store went away: back off and read again when it is back.
          guard try cursor.recover(from: error, stop: stop, notices: nil) else { return nil }
        }
      }
    }
  }

  /// What changed since `state.shown`, read in one snapshot; nil when the
  /// list is as shown (its counters are brought up to date all the same).
  private func read(_ state: inout State) throws(MsglogError) -> ListUpdate? {
    let shown = state.shown
    let fromEvents = state.pendingHere == false
    let found = try log.reading { snapshot -> Read in
      let head = try snapshot.headSeq()
      let pendingHere = try snapshot.localView?.pendingStreams.contains(shown.stream) ?? false
      // Events a trim dropped since the list shown are not there to fold:
      // the list is read, and the update is the difference.
      if fromEvents, !pendingHere, head >= shown.seq, try snapshot.historyBegins() <= shown.seq + 1,
        let events = try Self.changes(in: snapshot, after: shown)
      {
        return .events(events.changes, seq: head, version: events.version, pendingHere: false)
      }
      return .list(try snapshot.items(of: shown.stream), pendingHere: pendingHere)
    }
    var now: StreamContents
    let changes: [ListChange]
    switch found {
    case .events(let events, let seq, let version, let pendingHere):
      now = shown
      for change in events { change.apply(to: &now.items) }
      (now.seq, now.version) = (seq, version)
      // Several events tell a history (a remove and its undo): the update
      // is the difference, as when it is read from the list.
      changes = events.count > 1 ? ListChange.changes(from: shown.items, to: now.items) : events
      state.pendingHere = pendingHere
    case .list(let contents, let pendingHere):
      now = contents
      changes = ListChange.changes(from: shown.items, to: contents.items)
      state.pendingHere = pendingHere
    }
    state.shown = now
    guard !changes.isEmpty || now.version != shown.version else { return nil }
    return ListUpdate(stream: now.stream, changes: changes, seq: now.seq, version: now.version)
  }

  /// The stream's events after the list shown, as changes, with the
  /// stream's version after them; nil past `eventLimit` of them.
  private static func changes(in snapshot: borrowing LogSnapshot, after shown: StreamContents) throws
    -> (changes: [ListChange], version: UInt64)?
  {
    var changes: [ListChange] = []
    var version = shown.version
    try snapshot.forEachEvent(from: shown.seq + 1, stream: shown.stream) { event in
      guard changes.count < eventLimit else { return false }
      if let change = ListChange(changing: try snapshot.change(for: event)) { changes.append(change) }
      version = event.version
      return true
    }
    return changes.count < eventLimit ? (changes, version) : nil
  }
}
