#if canImport(Glibc)
  import Glibc
#endif

/// A file descriptor that ends a `follow` when it signals.
public struct FollowStop: Sendable {
  public var fileDescriptor: Int32
  /// Readable (a self-pipe of signal handlers, a cancellation pipe), or
  /// only hung up (stdout: its reader went away; a terminal may also be readable).
  public var whenReadable: Bool

  public init(fileDescriptor: Int32, whenReadable: Bool) {
    self.fileDescriptor = fileDescriptor
    self.whenReadable = whenReadable
  }
}

/// What a follower says while it cannot follow: the store went away (a
/// server restarted, a connection was cut) and it tries again.
public enum FollowNotice: Sendable {
  /// Lost: it tries again after `delay`, and goes on from seq `resumeFrom`.
  case reconnecting(error: MsglogError, delay: Duration, resumeFrom: UInt64)
  /// Following again.
  case reconnected
}

extension EventLog {
  /// Calls `body` with each event from `seq` on (nil: after the current
  /// head, only new events) as it commits, from any process, in seq order,
  /// exactly once — seqs are gapless and in commit order, so nothing can be
  /// skipped, and the follower checks that. Only `stream`'s events when given.
  ///
  /// Blocks until `body` returns false or a `stop` descriptor signals. The
  /// follower is woken by the store (inotify on LMDB's data file, `LISTEN`
  /// on a PostgreSQL primary, the head polled on a standby), never by a
  /// timer; it is a reader and never holds writers up.
  ///
  /// Once it has started, a follower survives its store going away — a
  /// server restart, a dropped connection: it tries again with backoff
  /// (0.1 s, doubling up to 5 s, `notices` told each time) and goes on
  /// after the last event it handed to `body`. What `body` throws passes
  /// through.
  public func follow(
    from seq: UInt64? = nil, stream: StreamName? = nil, stop: [FollowStop] = [],
    notices: ((FollowNotice) -> Void)? = nil, _ body: (Event) throws -> Bool
  ) throws {
    guard let store = store as? any FollowableStore else {
      throw MsglogError.storage("this store cannot be followed")
    }
    // Watch first, then read: a commit in between still wakes the poll.
    var watcher: (any CommitWatcher)? = try store.watchCommits()
    var next = try seq.map { max($0, 1) } ?? (try headSeq() + 1)
    var woken = false
    var failures = 0
    while true {
      do {
        if watcher == nil { watcher = try store.watchCommits() }
        let progressed = try readAll(from: &next, stream: stream, body)
        if failures > 0 {
          failures = 0
          notices?(.reconnected)
        }
        guard let progressed else { return }
        guard try waitForCommit(watcher!, stop: stop, woken: &woken, progressed: progressed) else { return }
      } catch let error as MsglogError where Self.isLostStore(error) {
        // Whatever the watcher held is gone with the connection.
        watcher = nil
        woken = false
        failures += 1
        let delay = Duration.milliseconds(min(100 << min(failures - 1, 6), 5_000))
        notices?(.reconnecting(error: error, delay: delay, resumeFrom: next))
        guard Self.wait(delay, unless: stop) else { return }
      } catch let failure as BodyFailure {
        throw failure.error
      }
    }
  }

  /// Whether a follower's store went away (and may come back), rather than
  /// refused it.
  package static func isLostStore(_ error: MsglogError) -> Bool {
    switch error {
    case .connectionLost, .cannotConnect: return true
    default: return false
    }
  }

  /// What `body` threw: passed through, never taken for the store's failure.
  private struct BodyFailure: Error {
    var error: any Error
  }

  /// Reads and hands out every event from `next` on, in bounded chunks,
  /// each after its read returns: a read that must run again (a log read
  /// without a lock) never hands one out twice. Whether any event was
  /// read; nil when `body` said to stop.
  private func readAll(from next: inout UInt64, stream: StreamName?, _ body: (Event) throws -> Bool) throws -> Bool? {
    var progressed = false
    while true {
      var batch: [Event] = []
      let from = next
      try read { snapshot in
        batch.removeAll(keepingCapacity: true)
        try snapshot.forEachEvent(from: from) { event in
          batch.append(event)
          return batch.count < 1024
        }
      }
      for event in batch {
        guard event.seq == next else {
          throw MsglogError.corruptedLog("a follower expected seq \(next) and found seq \(event.seq)")
        }
        next += 1
        progressed = true
        if let stream, event.stream != stream { continue }
        do {
          guard try body(event) else { return nil }
        } catch {
          throw BodyFailure(error: error)
        }
      }
      if batch.count < 1024 { return progressed }
    }
  }

  /// Waits until the store says a commit may have happened (true) or one
  /// of `stop` signals (false).
  ///
  /// A wake that brought nothing may have come from the data pages of a
  /// commit another program has not finished publishing: after one, it
  /// looks once more shortly after rather than wait for the store. A
  /// store that is polled says when to look next.
  private func waitForCommit(_ watcher: any CommitWatcher, stop: [FollowStop], woken: inout Bool, progressed: Bool)
    throws -> Bool
  {
    let lookAgainSoon = woken && !progressed
    woken = false
    while true {
      let interval = watcher.pollInterval
      var timeout: Int32 = lookAgainSoon ? 20 : -1
      if interval >= 0 { timeout = timeout < 0 ? interval : min(timeout, interval) }
      var fds = [pollfd(fd: watcher.fileDescriptor, events: Int16(POLLIN), revents: 0)]
      fds += stop.map { pollfd(fd: $0.fileDescriptor, events: $0.whenReadable ? Int16(POLLIN) : 0, revents: 0) }
      var ready: Int32
      repeat { ready = poll(&fds, nfds_t(fds.count), timeout) } while ready < 0 && errno == EINTR
      if fds.dropFirst().contains(where: { $0.revents != 0 }) { return false }
      guard fds[0].revents != 0 || interval >= 0 else { return true }  // the look again after an empty wake
      if try watcher.drain() {
        woken = true
        return true
      }
    }
  }

  /// Sleeps `delay` unless a `stop` descriptor signals first (false).
  static func wait(_ delay: Duration, unless stop: [FollowStop]) -> Bool {
    let milliseconds = Int32(delay.components.seconds * 1000 + delay.components.attoseconds / 1_000_000_000_000_000)
    var fds = stop.map { pollfd(fd: $0.fileDescriptor, events: $0.whenReadable ? Int16(POLLIN) : 0, revents: 0) }
    let deadline = ContinuousClock.now + delay
    while ContinuousClock.now < deadline {
      let left = deadline - ContinuousClock.now
      let wait = min(milliseconds, Int32(left.components.seconds * 1000 + left.components.attoseconds / 1_000_000_000_000_000) + 1)
      let ready = poll(&fds, nfds_t(fds.count), wait)
      if ready > 0, fds.contains(where: { $0.revents != 0 }) { return false }
    }
    return true
  }

  /// The events from `seq` on (nil: only new ones) as they commit, as an
  /// asynchronous sequence; only `stream`'s when given. Ends when the
  /// consuming task is cancelled (or stops iterating).
  ///
  ///     for try await event in log.follow() { print(event.seq, event.opName) }
  public func follow(from seq: UInt64? = nil, stream: StreamName? = nil) -> AsyncThrowingStream<Event, any Error> {
    AsyncThrowingStream { continuation in
      var ends: [Int32] = [0, 0]
      guard pipe(&ends) == 0 else {
        continuation.finish(throwing: MsglogError.storage("cannot follow: \(systemMessage(errno))"))
        return
      }
      let (wake, cancel) = (ends[0], ends[1])
      // Called once, whoever ends the stream: wake the thread, then let go
      // of this end (the thread owns the other).
      continuation.onTermination = { _ in
        var byte: UInt8 = 1
        _ = Glibc.write(cancel, &byte, 1)
        close(cancel)
      }
      let started = startThread {
        defer { close(wake) }
        do {
          try self.follow(from: seq, stream: stream, stop: [FollowStop(fileDescriptor: wake, whenReadable: true)]) {
            if case .terminated = continuation.yield($0) { return false }
            return true
          }
          continuation.finish()
        } catch {
          continuation.finish(throwing: error)
        }
      }
      if !started {
        close(wake)
        continuation.finish(throwing: MsglogError.storage("cannot follow: no thread could be started"))
      }
    }
  }
}

/// Runs `body` on a thread of its own (a follower blocks in `poll`, which a
/// shared pool's thread must not): the one way this package starts a
/// thread. False when the system would start none (`body` is then not run).
@discardableResult
package func startThread(_ body: @escaping @Sendable () -> Void) -> Bool {
  final class Box: @unchecked Sendable {
    let body: @Sendable () -> Void
    init(_ body: @escaping @Sendable () -> Void) { self.body = body }
  }
  var thread = pthread_t()
  let box = Unmanaged.passRetained(Box(body)).toOpaque()
  let rc = pthread_create(
    &thread, nil,
    { raw in
      let box = Unmanaged<Box>.fromOpaque(raw!).takeRetainedValue()
      box.body()
      return nil
    }, box)
  guard rc == 0 else {
    Unmanaged<Box>.fromOpaque(box).release()
    return false
  }
  pthread_detach(thread)
  return true
}
