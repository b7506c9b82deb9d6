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
  let requestIDs = RequestIDs()
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
    // Where the database is goes to the operator's line, not to the client.
    let displaced = HTTPError(
      status: 503, message: "the log's database was removed or replaced while serving; the server must be restarted")
    let isWrite = request.method == "POST"
    if isWrite && log.isDisplaced {
      warnings.warn("displaced", "the database \(log.location) was removed or replaced: writes are refused")
      return answer(.error(displaced))
    }
    let (log, warnings, pool) = (self.log, self.warnings, self.pool)
    router.respond(
      to: request,
      // A batch's building goes to a worker; with none to be had (the queue
      // full), to a thread of its own.
      elsewhere: { job in pool.submit(job) || startThread(job) },
      failed: { error, refusal in
        // What the operator must act on: the store gone, the disk full, a bug.
        // The error's own words, which name the database (the client's do not).
        let said = (error as? MsglogError)?.description ?? refusal.message
        if case .diskFull? = error as? MsglogError {
          warnings.error("disk", said)
        } else if refusal.status == 503 {
          warnings.warn("store", "\(request.method) \(request.path): \(said)")
        } else {
          warnings.error("internal", "\(request.method) \(request.path) answered \(refusal.status): \(said)")
        }
      }
    ) { response in
      if isWrite && log.isDisplaced {
        warnings.warn("displaced", "the database \(log.location) was removed or replaced: writes are refused")
        return answer(.error(displaced))
      }
      answer(response)
    }
  }
}
