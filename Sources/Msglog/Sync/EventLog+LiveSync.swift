import MsglogPosix

extension EventLog {
  /// What a live sync tells while it runs.
  public enum SyncNotice: Equatable, Sendable {
    /// A round pushed or pulled something.
    case synced(SyncReport)
    /// The remote could not be reached: waiting this long before trying again.
    case waiting(reason: String, seconds: Double)
    /// It answers again.
    case reconnected
  }

  /// Keeps the replica in sync until one of `stop` signals: pushes pending
  /// changes as they are made (by any process on the replica) and pulls
  /// events as they commit on the remote, reconnecting with backoff (0.1 s,
  /// doubling up to 5 s) while the remote cannot be reached or is too slow
  /// (each round bounded by `SyncOptions.timeout`). Holds the replica's sync
  /// lock throughout. Returns when stopped; throws what no retry can mend
  /// — another log, incompatible versions, a remote that breaks the
  /// protocol (`remoteFault`), a token refused (`tokenRefused`: sign in
  /// again) or a request forbidden (`remoteForbids`), a certificate that
  /// cannot be trusted (`untrustedRemote`).
  ///
  /// Between rounds it sleeps until something happens — a commit on the
  /// remote, a commit to the replica, a `stop` descriptor — and is woken
  /// by nothing else (a quiet remote gets a round every 25 s, as a kept
  /// event stream is renewed).
  ///
  /// Blocks the calling thread all along and calls `notices` on it,
  /// between rounds: run it on a thread of its own and hop to the main
  /// actor from `notices` before touching UI. From a task, the
  /// asynchronous `syncLive(options:notices:)` ends when the task is
  /// cancelled (docs/SYNC.md, "In an app").
  public func syncLive(
    options: SyncOptions = SyncOptions(), stop: [FollowStop], notices: (SyncNotice) -> Void = { _ in }
  ) throws {
    guard let state = try replicaState() else { throw MsglogError.notAReplica(location: location) }
    try syncLive(
      with: try EventLog.remote(at: state.remote, options: options), stop: stop, clock: options.clock,
      notices: notices)
  }

  /// `syncLive` from a task: runs on a thread of its own (it blocks) and
  /// returns once the task is cancelled, or throws what no retry mends.
  /// `notices` is called on that thread, between rounds.
  public func syncLive(
    options: SyncOptions = SyncOptions(), notices: @escaping @Sendable (SyncNotice) -> Void = { _ in }
  ) async throws {
    let cancelled = try MsglogPosix.WakePipe.made()
    try await withTaskCancellationHandler {
      try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
        let started = startThread { [self] in
          continuation.resume(with: Result { try syncLive(options: options, stop: [cancelled.stop], notices: notices) })
        }
        if !started { continuation.resume(throwing: MsglogError.systemRefused(.followerThread, errno: nil)) }
      }
    } onCancel: {
      cancelled.signal()
    }
  }

  /// How long a live sync waits before it tries again a purge that a read
  /// kept from finishing: ten minutes, in nanoseconds. Each try reads the
  /// whole file and makes every writer of the log open it afresh.
  package static let purgeRetry: UInt64 = 600 * 1_000_000_000

  package func syncLive(
    with remote: any SyncRemote, stop: [FollowStop], clock: () -> Deadline,
    notices: (SyncNotice) -> Void
  ) throws {
    guard try replicaState() != nil else { throw MsglogError.notAReplica(location: location) }
    let lock = try lockForSync()
    defer { withExtendedLifetime(lock) {} }
    // A stop ends an exchange under way too, not only the waits between
    // rounds, once it has had two seconds to end by itself (a round that
    // pushed gets its answer and settles): a remote that stalls would
    // otherwise hold the stop for a round's whole bound
    // (`SyncOptions.timeout`). (A year: the stop's wait has no bound of
    // its own.)
    let stopping = try WaitBound(seconds: 365 * 86_400, stops: stop, grace: 2, end: remote.canceller)
    defer { stopping.finish() }
    var backoff = 0.1
    var failing = false
    // A purge owed that a read kept from finishing is tried again after
    // `purgeRetry` only, not at every round.
    var unpurgedSince: Deadline? = nil
    while !FollowStop.anySignalled(stop) {
      let roundStart = clock()
      let paying = unpurgedSince.map { roundStart.nanoseconds(since: $0) >= Self.purgeRetry } ?? true
      var unpurged: MsglogError? = nil
      // Whatever the round's end, a purge that a read kept from finishing
      // waits, counted from this round's start (the iteration ends only
      // after the wait for the next event, which may be long).
      defer { if paying { unpurgedSince = unpurged == nil ? nil : roundStart } }
      do {
        remote.startRun()
        // Read each round: a round that started again under a new id (a
        // remote that lost track, or nothing pending behind a trim) leaves
        // the next one another replica id and secret to push under.
        guard let state = try replicaState() else { throw MsglogError.notAReplica(location: location) }
        let report = try owingPurge(paying: paying, unpurged: &unpurged) { try syncRound(with: remote, state: state) }
        if failing { notices(.reconnected) }
        failing = false
        backoff = 0.1
        if report.pushed > 0 || report.pulled > 0 || report.scrubbed != nil || report.unpurged != nil {
          notices(.synced(report))
        }
        let head = try headSeq()
        // Watch the replica first, then count: a change made in between
        // still wakes the wait.
        let changes = try watchChanges()
        guard try pendingCount() == 0 else { continue }
        // Until the remote commits, a change is made here, or a stop.
        _ = try withExtendedLifetime(changes) {
          try remote.waitForEvents(after: head, seconds: 25, stop: stop + changes.stops)
        }
      } catch let error as MsglogError where Self.isWorthRetrying(error) {
        if FollowStop.anySignalled(stop) { return }  // the exchange was cut by the stop
        failing = true
        notices(.waiting(reason: error.description, seconds: backoff))
        guard FollowStop.wait(.milliseconds(Int64(backoff * 1000)), unless: stop) else { return }
        backoff = min(backoff * 2, 5)
      }
    }
  }

  /// The replica's commits as a stop of a live sync's wait: none when its
  /// store cannot be watched (its changes then wait for the next round).
  private func watchChanges() throws -> ChangeWatch {
    guard let store = store as? any FollowableStore else { return ChangeWatch(watcher: nil) }
    do {
      return ChangeWatch(watcher: try store.watchCommits())
    } catch {
      throw MsglogError(anyStoreFailure: error)
    }
  }

  /// Whether a failure may pass by itself: the remote unreachable or cut.
  static func isWorthRetrying(_ error: MsglogError) -> Bool {
    switch error {
    case .cannotConnect, .connectionLost, .syncTimedOut: return true
    default: return error.category == .unavailable
    }
  }
}

/// A watch on the replica's commits while a live sync waits: its
/// descriptor ends the wait (it is dropped, not drained, after).
struct ChangeWatch {
  var watcher: (any CommitWatcher)?

  var stops: [FollowStop] {
    guard let watcher, watcher.fileDescriptor >= 0 else { return [] }
    return [FollowStop(fileDescriptor: watcher.fileDescriptor, whenReadable: true)]
  }
}
