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
  /// on a PostgreSQL primary, the head polled on a standby), never by a
  /// sleep loop; it is a reader and never holds writers up. What `body`
  /// throws passes through.
  ///
  /// Once it has started, a follower survives its store going away — a
  /// server restart, a dropped connection: it tries again with backoff
  /// (0.1 s, doubling up to 5 s, `notices` told each time) and goes on
  /// after the last event it handed to `body`.
  public func follow(
    from seq: UInt64? = nil, stream: StreamName? = nil, stop: [FollowStop] = [],
    notices: ((FollowNotice) -> Void)? = nil, _ body: (Event) throws -> Bool
  ) throws {
    let cursor = try FollowCursor(log: self, from: seq, stream: stream)
    while true {
      do {
        while true {
          let (events, read) = try cursor.nextBatch()
          if cursor.takeRecovery() { notices?(.reconnected) }
          for event in events {
            do {
              guard try body(event) else { return }
            } catch {
              throw FollowBodyFailure(error: error)
            }
          }
          if read < FollowCursor.batchSize { break }
        }
        guard try cursor.waitForCommit(stop: stop) else { return }
      } catch let error as MsglogError {
        guard try cursor.recover(from: error, stop: stop, notices: notices) else { return }
      } catch let failure as FollowBodyFailure {
        throw failure.error
      }
    }
  }

  /// Calls `body` with the log's head seq whenever it is past `seq` and
  /// past the last one handed out — at once if it already is, then as
  /// commits move it — until `body` returns false or a `stop` descriptor
  /// signals: for what only needs to know that the log grew, not what it
  /// holds (the server's commit hub, whose streams read the events
  /// themselves). A commit costs one read of the head, where `follow`
  /// reads and decodes every event it wrote; several commits may be seen
  /// as one head. A replica's pending changes do not count (the head is
  /// the log's own, as `follow` hands out). Survives the store going away
  /// as `follow` does.
  public func followHead(
    after seq: UInt64, stop: [FollowStop] = [], notices: ((FollowNotice) -> Void)? = nil,
    _ body: (UInt64) -> Bool
  ) throws(MsglogError) {
    let cursor = try FollowCursor(log: self, from: seq + 1, stream: nil)
    var last = seq
    while true {
      do throws(MsglogError) {
        let head = try cursor.readHead()
        if cursor.takeRecovery() { notices?(.reconnected) }
        if head > last {
          last = head
          guard body(head) else { return }
        }
        guard try cursor.waitForCommit(stop: stop) else { return }
      } catch {
        guard try cursor.recover(from: error, stop: stop, notices: notices) else { return }
      }
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
  private let store: any FollowableStore
  private let stream: StreamName?
  /// Nil once the store went away, until it is back.
  private var watcher: (any CommitWatcher)?
  /// The seq to read next.
  private var next: UInt64
  /// Whether `next` is still the `--from` asked for, nothing read yet
  /// (`LogSnapshot.firstEvent(from:asked:)`).
  private var fromAsked: Bool
  /// How many times the store woke it to read (each wake is one read of
  /// the log): one per commit of a write, none for anything else.
  private(set) var wakes = 0
  /// Attempts in a row that found the store away (0 while following).
  private var failures = 0
  /// Whether the store came back since `takeRecovery` was last asked.
  private var recovered = false
  /// Whether the database did not exist yet when last looked at: `watcher`
  /// then wakes on its creation, not on commits.
  private var awaitingDatabase = false

  init(log: EventLog, from seq: UInt64?, stream: StreamName?) throws(MsglogError) {
    guard let store = log.store as? any FollowableStore else { throw .cannotFollow(location: log.location) }
    self.log = log
    self.store = store
    self.stream = stream
    // Watch first, then read: a commit in between still wakes the poll.
    do {
      watcher = try Self.watch(store)
    } catch .noDatabase where log.configuration.readsMissingDatabaseAsEmpty {
      // Not made yet: wait for the first commit, which makes it.
      watcher = try Self.watchCreation(store)
      awaitingDatabase = true
    }
    if let seq {
      next = max(seq, 1)
    } else {
      next = try log.reading { try $0.headSeq() } + 1
    }
    fromAsked = seq != nil
  }

  private static func watch(_ store: any FollowableStore) throws(MsglogError) -> any CommitWatcher {
    do {
      return try store.watchCommits()
    } catch {
      throw MsglogError(anyStoreFailure: error)
    }
  }

  private static func watchCreation(_ store: any FollowableStore) throws(MsglogError) -> any CommitWatcher {
    do {
      return try store.watchCreation()
    } catch {
      throw MsglogError(anyStoreFailure: error)
    }
  }

  /// While the database is missing: watches its creation afresh (what is
  /// watched may have changed: the path made as an empty directory), then
  /// tries to watch its commits; either way before the read that follows,
  /// so a first commit in between still wakes the poll.
  private func lookForDatabase() throws(MsglogError) {
    let creation = try Self.watchCreation(store)
    do {
      watcher = try Self.watch(store)
      awaitingDatabase = false
    } catch .noDatabase {
      watcher = creation
    }
  }

  /// After a failure: if the store went away (rather than refused), waits
  /// with backoff — 0.1 s, doubling up to 5 s, unless a `stop` descriptor
  /// signals (false) — telling `notices`, so that the next round watches and
  /// reads again from the seq after the last one handed out. Otherwise
  /// throws `error`.
  func recover(from error: MsglogError, stop: [FollowStop], notices: ((FollowNotice) -> Void)?) throws(MsglogError)
    -> Bool
  {
    guard EventLog.isLostStore(error) else { throw error }
    if case .readCancelled = error {
      // A standby cancelled a read (a recovery conflict): the connection
      // and the watcher are sound, and the read is simply made again.
      return FollowStop.wait(.milliseconds(50), unless: stop)
    }
    watcher = nil  // whatever it held is gone with its connection
    failures += 1
    let delay = Duration.milliseconds(min(100 << min(failures - 1, 6), 5_000))
    notices?(.reconnecting(error: error, delay: delay, resumeFrom: next))
    return FollowStop.wait(delay, unless: stop)
  }

  /// Whether the store came back after being away (asked once per return).
  func takeRecovery() -> Bool {
    defer { recovered = false }
    return recovered
  }

  /// The next events of the log, at most `batchSize` read, in seq order
  /// and checked to be gapless; of them, those of the stream followed.
  /// `read` < `batchSize`: the log has no more for now.
  ///
  /// The events come out after the read returns: a read that must run
  /// again (a log read without a lock) never hands one out twice.
  func nextBatch() throws(MsglogError) -> (events: [Event], read: Int) {
    try prepareToRead()
    let (from, asked) = (next, fromAsked)
    let (batch, first) = try log.reading { snapshot in
      var batch: [Event] = []
      // History trimmed away under a follower (or before it began): it
      // reloads from the present rather than skip what it cannot have.
      let first = try snapshot.firstEvent(from: from, asked: asked)
      try snapshot.forEachEvent(from: first) { event in
        batch.append(event)
        return batch.count < Self.batchSize
      }
      return (batch, first)
    }
    readSucceeded()
    (next, fromAsked) = (first, false)
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

  /// The log's head seq now (watching again first after the store was
  /// away, as `nextBatch` does), as cheaply as the store reads it — not
  /// at all when the watcher's wake announced it (`CommitWatcher`); a
  /// reconnection then resumes after it.
  func readHead() throws(MsglogError) -> UInt64 {
    try prepareToRead()
    // What woke the wait may have told it already (this process's own commit).
    if let announced = watcher?.takeAnnouncedHead() {
      next = max(next, announced + 1)
      return announced
    }
    let head: UInt64
    do {
      head = try store.committedHead()
    } catch MsglogError.noDatabase where log.configuration.readsMissingDatabaseAsEmpty {
      head = 0
    } catch {
      throw MsglogError(anyStoreFailure: error)
    }
    readSucceeded()
    next = max(next, head + 1)
    return head
  }

  /// Before a read: back after the store was away (or while the database
  /// is not made yet), watches again first, so that a commit during the
  /// read still wakes the wait after it.
  func prepareToRead() throws(MsglogError) {
    // LMDB's file replaced (a backup restored by `mv`) or removed: the map
    // still holds the old one, whose commits have ended, and the follower
    // waited on it in silence. (A stat(2) of the path and an fstat(2) of
    // the open file a read: nothing beside the read.)
    if !awaitingDatabase, log.isDisplaced { throw .followedDatabaseDisplaced(location: log.location) }
    if awaitingDatabase {
      try lookForDatabase()
    } else if watcher == nil {
      watcher = try Self.watch(store)
    }
  }

  /// After a read that worked: the store is back, if it was away.
  func readSucceeded() {
    if failures > 0 {
      failures = 0
      recovered = true
    }
  }

  /// Waits until the store says a commit may have happened (true) or one
  /// of `stop` signals (false). A store that is polled says when to look
  /// next.
  func waitForCommit(stop: [FollowStop]) throws(MsglogError) -> Bool {
    guard let watcher else { return true }  // away: the next read watches again
    while true {
      let interval = watcher.pollInterval
      var fds = [pollfd(fd: watcher.fileDescriptor, events: Int16(POLLIN), revents: 0)]
      fds += stop.map { pollfd(fd: $0.fileDescriptor, events: $0.whenReadable ? Int16(POLLIN) : 0, revents: 0) }
      var ready: Int32
      repeat { ready = poll(&fds, nfds_t(fds.count), interval) } while ready < 0 && errno == EINTR
      if fds.dropFirst().contains(where: { $0.revents != 0 }) { return false }
      guard fds[0].revents != 0 || interval >= 0 else { continue }
      let grew: Bool
      do { grew = try watcher.drain() } catch { throw MsglogError(anyStoreFailure: error) }
      if grew {
        wakes += 1
        return true
      }
    }
  }
}

/// What a follower's `body` threw: passed through, never taken for the store's failure.
struct FollowBodyFailure: Error {
  var error: any Error
}

extension EventLog {
  /// Whether a follower's store went away (and may come back), or cancelled
  /// a read that may simply be made again (a standby's recovery conflict),
  /// rather than refused it.
  package static func isLostStore(_ error: MsglogError) -> Bool {
    switch error {
    case .connectionLost, .cannotConnect, .readCancelled: return true
    default: return false
    }
  }
}
