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
  /// follower is woken by the store (inotify on LMDB's data file), never by
  /// a timer; it is a reader and never holds writers up.
  public func follow(
    from seq: UInt64? = nil, stream: StreamName? = nil, stop: [FollowStop] = [], _ body: (Event) throws -> Bool
  ) throws {
    guard let store = store as? any FollowableStore else {
      throw MsglogError.storage("this store cannot be followed")
    }
    // Watch first, then read: a commit in between still wakes the poll.
    let watcher = try store.watchCommits()
    var next = try seq.map { max($0, 1) } ?? (try headSeq() + 1)
    var woken = false
    while true {
      var progressed = false
      // Read in bounded chunks and emit after each read returns: a read that
      // must run again (a log read without a lock) never emits twice.
      while true {
        var batch: [Event] = []
        try read { snapshot in
          batch.removeAll(keepingCapacity: true)
          try snapshot.forEachEvent(from: next) { event in
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
          guard try body(event) else { return }
        }
        if batch.count < 1024 { break }
      }
      // A wake that brought nothing may have come from the data pages of a
      // commit another program has not finished publishing: look once more
      // shortly after; otherwise wait for the store.
      let timeout: Int32 = woken && !progressed ? 20 : -1
      var fds = [pollfd(fd: watcher.fileDescriptor, events: Int16(POLLIN), revents: 0)]
      fds += stop.map { pollfd(fd: $0.fileDescriptor, events: $0.whenReadable ? Int16(POLLIN) : 0, revents: 0) }
      var ready: Int32
      repeat { ready = poll(&fds, nfds_t(fds.count), timeout) } while ready < 0 && errno == EINTR
      if fds.dropFirst().contains(where: { $0.revents != 0 }) { return }
      woken = fds[0].revents != 0
      if woken { try watcher.drain() }
    }
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
      startThread {
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
    }
  }
}
