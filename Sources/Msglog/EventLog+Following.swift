#if canImport(Glibc)
  import Glibc
#endif

extension EventLog {
  /// Calls `body` with each event from `seq` on (nil: after the current
  /// head, only new events) as it commits, from any process, in seq order,
  /// exactly once — seqs are gapless and in commit order, so nothing can be
  /// skipped, and the follower checks that. Only `stream`'s events when given.
  ///
  /// Blocks until `body` returns false or a `stop` descriptor signals. The
  /// follower is woken by the store (inotify on LMDB's data file, `LISTEN`
  /// on PostgreSQL), never by a timer; it is a reader and never holds
  /// writers up. What `body` throws passes through.
  public func follow(
    from seq: UInt64? = nil, stream: StreamName? = nil, stop: [FollowStop] = [], _ body: (Event) throws -> Bool
  ) throws {
    let cursor = try FollowCursor(log: self, from: seq, stream: stream)
    while true {
      var progressed = false
      while true {
        let (events, read) = try cursor.nextBatch()
        progressed = progressed || read > 0
        for event in events {
          guard try body(event) else { return }
        }
        if read < FollowCursor.batchSize { break }
      }
      guard try cursor.waitForCommit(stop: stop, afterProgress: progressed) else { return }
    }
  }

  /// The events from `seq` on (nil: those committed after the iteration
  /// starts) as they commit, as an asynchronous sequence; only `stream`'s
  /// when given. Ends when the consuming task is cancelled (or stops
  /// iterating).
  ///
  ///     for try await event in log.follow() { print(event.seq, event.opName) }
  ///
  /// The log is read as the consumer asks for events, a batch of at most
  /// 1,024 at a time: a consumer slower than the writers holds the reading
  /// back, and never piles up events in memory. Waiting for a commit takes
  /// a thread of its own, not one of the shared pool's.
  public func follow(from seq: UInt64? = nil, stream: StreamName? = nil) -> AsyncThrowingStream<Event, any Error> {
    let follower = LogFollower(log: self, from: seq, stream: stream)
    return AsyncThrowingStream(unfolding: { try await follower.next() })
  }
}

/// Where a follower is in the log and what wakes it, for one follower at a
/// time (the blocking `follow`, or an asynchronous one's current thread).
final class FollowCursor {
  /// How many events one read fetches.
  static let batchSize = 1024

  private let log: EventLog
  private let stream: StreamName?
  private let watcher: any CommitWatcher
  /// The seq to read next.
  private var next: UInt64
  /// Whether the last wait ended because the store signalled.
  private var woken = false

  init(log: EventLog, from seq: UInt64?, stream: StreamName?) throws(MsglogError) {
    guard let store = log.store as? any FollowableStore else { throw .storage("this store cannot be followed") }
    self.log = log
    self.stream = stream
    // Watch first, then read: a commit in between still wakes the poll.
    do {
      watcher = try store.watchCommits()
    } catch {
      throw MsglogError(anyStoreFailure: error)
    }
    if let seq {
      next = max(seq, 1)
    } else {
      next = try log.reading { try $0.headSeq() } + 1
    }
  }

  /// The next events of the log, at most `batchSize` read, in seq order
  /// and checked to be gapless; of them, those of the stream followed.
  /// `read` < `batchSize`: the log has no more for now.
  ///
  /// The events come out after the read returns: a read that must run
  /// again (a log read without a lock) never hands one out twice.
  func nextBatch() throws(MsglogError) -> (events: [Event], read: Int) {
    let from = next
    let batch = try log.reading { snapshot in
      var batch: [Event] = []
      try snapshot.forEachEvent(from: from) { event in
        batch.append(event)
        return batch.count < Self.batchSize
      }
      return batch
    }
    var events: [Event] = []
    for event in batch {
      guard event.seq == next else {
        throw .corruptedLog("a follower expected seq \(next) and found seq \(event.seq)")
      }
      next += 1
      if let stream, event.stream != stream { continue }
      events.append(event)
    }
    return (events, batch.count)
  }

  /// Waits until the store says a commit may have happened (true) or one
  /// of `stop` signals (false).
  ///
  /// A wake that brought nothing may have come from the data pages of a
  /// commit another program has not finished publishing: after one, it
  /// looks once more shortly after rather than wait for the store.
  func waitForCommit(stop: [FollowStop], afterProgress progressed: Bool) throws(MsglogError) -> Bool {
    let timeout: Int32 = woken && !progressed ? 20 : -1
    var fds = [pollfd(fd: watcher.fileDescriptor, events: Int16(POLLIN), revents: 0)]
    fds += stop.map { pollfd(fd: $0.fileDescriptor, events: $0.whenReadable ? Int16(POLLIN) : 0, revents: 0) }
    var ready: Int32
    repeat { ready = poll(&fds, nfds_t(fds.count), timeout) } while ready < 0 && errno == EINTR
    if fds.dropFirst().contains(where: { $0.revents != 0 }) { return false }
    woken = fds[0].revents != 0
    if woken {
      do { try watcher.drain() } catch { throw MsglogError(anyStoreFailure: error) }
    }
    return true
  }
}
