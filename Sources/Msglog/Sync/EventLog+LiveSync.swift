#if canImport(Glibc)
  import Glibc
#endif

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

  /// Keeps the replica in sync until `stop` says to: pushes pending changes
  /// as they are made (by any process on the replica) and pulls events as
  /// they commit on the remote, reconnecting with backoff (0.1 s, doubling
  /// up to 5 s) while the remote cannot be reached or is too slow (each
  /// round bounded by `SyncOptions.timeout`). Holds the replica's sync
  /// lock throughout. Returns when stopped; throws what no retry can mend
  /// — another log, incompatible versions, a remote that breaks the
  /// protocol (`remoteFault`), a token refused (`tokenRefused`: sign in
  /// again) or a request forbidden (`remoteForbids`), a certificate that
  /// cannot be trusted (`untrustedRemote`).
  ///
  /// Blocks the calling thread all along and calls `notices` on it,
  /// between rounds; `stop` is asked from threads of its own too. So: run
  /// it on a thread of its own, give it a `stop` made for threads (an
  /// `Atomic` flag), and hop to the main actor from `notices` before
  /// touching UI (docs/SYNC.md, "In an app").
  public func syncLive(
    options: SyncOptions = SyncOptions(), stop: @escaping @Sendable () -> Bool,
    notices: (SyncNotice) -> Void = { _ in }
  ) throws {
    guard let state = try replicaState() else { throw MsglogError.notAReplica(location: location) }
    try syncLive(with: try EventLog.remote(at: state.remote, options: options), stop: stop, notices: notices)
  }

  package func syncLive(
    with remote: any SyncRemote, stop: @escaping @Sendable () -> Bool, notices: (SyncNotice) -> Void
  ) throws {
    guard let state = try replicaState() else { throw MsglogError.notAReplica(location: location) }
    let lock = try lockForSync()
    defer { withExtendedLifetime(lock) {} }
    var backoff = 0.1
    var failing = false
    while !stop() {
      do {
        remote.startRun()
        let report = try syncRound(with: remote, state: state)
        if failing { notices(.reconnected) }
        failing = false
        backoff = 0.1
        if report.pushed > 0 || report.pulled > 0 { notices(.synced(report)) }
        let head = try headSeq()
        // Until the remote commits, or a change is made here.
        _ = try remote.waitForEvents(after: head, seconds: 25) { [self] in
          stop() || ((try? pendingCount()) ?? 0) > 0
        }
      } catch let error as MsglogError where Self.isWorthRetrying(error) {
        failing = true
        notices(.waiting(reason: error.description, seconds: backoff))
        let deadline = Deadline.after(seconds: backoff)
        while !deadline.hasPassed && !stop() { usleep(20_000) }
        backoff = min(backoff * 2, 5)
      }
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
