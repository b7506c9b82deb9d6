import Msglog
import Synchronization

/// What every event loop and worker of one server shares: the router, the
/// workers, the commit hub, the limits and counters, and whether it is
/// stopping.
final class ServerCore: Sendable {
  let log: EventLog
  let router: Router
  let commits: CommitHub
  let pool: WorkerPool
  let count: ConnectionCount
  let budget: BodyBudget
  let warnings: ServerLog
  /// Each request's line (`--log-format`).
  let requestLog: RequestLog
  let requestIDs: RequestIDs
  /// nil with `--no-metrics`.
  let metrics: Metrics?
  /// TLS's credentials, when it serves HTTPS.
  let tls: TLSServerCredentials?
  /// Whose forwarded client address and scheme are believed (`--trusted-proxy`).
  let proxies: TrustedProxies
  /// From a connection's start (or the end of its previous answer) to the
  /// end of its request's head.
  let headerDeadline: Double
  /// From the end of a request's head to the end of its body.
  let bodyDeadline: Double = 10
  /// How long an answer waits for a client that takes nothing of it.
  let stallLimit: Double
  private let stopFlag = Atomic(false)

  init(
    log: EventLog, router: Router, commits: CommitHub, pool: WorkerPool, limits: ConnectionLimits,
    configuration: ServerConfiguration, metrics: Metrics?, tls: TLSServerCredentials?, warnings: ServerLog
  ) {
    self.log = log
    self.router = router
    self.commits = commits
    self.pool = pool
    count = ConnectionCount(limits: limits)
    // Room for 48 bodies of the largest size at once.
    budget = BodyBudget(limit: 48 * ServerConfiguration.bodyLimit)
    requestIDs = RequestIDs(operatorToken: configuration.token)
    headerDeadline = configuration.headerDeadline
    stallLimit = configuration.stallLimit
    requestLog = warnings.requests
    self.warnings = warnings
    self.metrics = metrics
    self.tls = tls
    proxies = configuration.trustedProxies
  }

  var isStopping: Bool { stopFlag.load(ordering: .relaxed) }
  func beginStopping() { stopFlag.store(true, ordering: .relaxed) }

  /// The answer to a whole request, begun on a worker: `answer` is called
  /// there, or for a write by the thread that commits it. A write is refused with
  /// 503 when the LMDB database it would go into is no longer the one at
  /// the log's path (removed or replaced), looked at before the write and
  /// again after its commit: nothing is acknowledged into a deleted file.
  func respond(to request: Request, then answer: @escaping @Sendable (Response) -> Void) {
    if request.method == "POST" && log.isDisplaced { return answer(.error(refusedAsDisplaced())) }
    router.respond(to: request, failed: failed(request), then: answeringWrites(request, answer))
  }

  /// `respond` on an event loop, for a write that needs no worker
  /// (`Router.respondWithoutWaiting`): queued from here, answered by the
  /// thread that commits it. False for any other request; for a body over
  /// `bodyDecodedOnLoop` (its decoding would hold up every connection of
  /// the loop); and while the log is not yet known to take a write without
  /// a read (`EventLog.queuesWithoutReading`: its tables then are open,
  /// and looking at the database's file waits for nothing).
  func respondWithoutWaiting(to request: Request, then answer: @escaping @Sendable (Response) -> Void) -> Bool {
    guard request.method == "POST", request.body.count <= Self.bodyDecodedOnLoop, log.queuesWithoutReading
    else { return false }
    if log.isDisplaced {
      answer(.error(refusedAsDisplaced()))
      return true
    }
    return router.respondWithoutWaiting(to: request, failed: failed(request), then: answeringWrites(request, answer))
  }

  /// The largest write body an event loop decodes itself (a message of a
  /// few thousand characters); a larger one goes to a worker.
  static let bodyDecodedOnLoop = 16 * 1024

  /// What the operator must act on: the store gone, the disk full, a bug —
  /// in the error's own words, which name the database (the client's do not).
  private func failed(_ request: Request) -> @Sendable (any Error, HTTPError) -> Void {
    { [warnings] error, refusal in
      let said = (error as? MsglogError)?.description ?? refusal.message
      switch error as? MsglogError {
      case .diskFull?, .lmdbFailure(.fileSizeLimit)?:
        warnings.error("disk", said)
      case .readOnly(_, _, let reason)? where reason == MsglogError.replicaRefusal:
        break  // a standby's serve refuses writes as documented
      default:
        if refusal.status == 503 || refusal.reason == TokenGate.Refusal.store.rawValue {
          warnings.warn("store", "\(request.method) \(request.path): \(said)")
        } else {
          warnings.error("internal", "\(request.method) \(request.path) answered \(refusal.status): \(said)")
        }
      }
    }
  }

  /// `answer`, but a write is refused when the database was displaced by the time it committed.
  private func answeringWrites(_ request: Request, _ answer: @escaping @Sendable (Response) -> Void)
    -> @Sendable (Response) -> Void
  {
    guard request.method == "POST" else { return answer }
    return { [self] response in answer(log.isDisplaced ? .error(refusedAsDisplaced()) : response) }
  }

  /// 503 for a write into a displaced database; where the database is goes
  /// to the operator's line, not to the client.
  private func refusedAsDisplaced() -> HTTPError {
    warnings.warn("displaced", "the database \(log.location) was removed or replaced: writes are refused")
    return HTTPError(
      status: 503, message: "the log's database was removed or replaced while serving; the server must be restarted")
  }
}
