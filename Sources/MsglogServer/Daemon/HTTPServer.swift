import Msglog

#if canImport(Glibc)
  import Glibc
#endif

/// `msglog serve`: the JSON API, Server-Sent Events and the web page, on
/// msglog's own HTTP/1.1 engine.
///
/// A few event-loop threads (`EventLoop`, epoll) hold every connection and
/// parse its requests strictly (`RequestDecoder`, on `HTTPHeadParser`); each whole
/// request is decoded into a plain `Request` and answered by the `Router`
/// from the route table on a fixed pool of workers (`WorkerPool`); bodies
/// are pulled a piece at a time as clients read, and event streams wait,
/// parked in their loop, for `CommitHub` to see the head pass them.
package final class HTTPServer: @unchecked Sendable {  // `loops`, `listener`: set by start, cleared by stop, on one thread
  package let log: EventLog
  package let configuration: ServerConfiguration
  package let router: Router
  let commits: CommitHub
  /// What `/metrics` shows (nil with `--no-metrics`); the sync's routes
  /// count their changes here (`Metrics.syncChanges(result:)`).
  package let metrics: Metrics?
  /// The certificate and key, loaded at start, when it serves HTTPS.
  let tls: TLSServerCredentials?
  /// The request log and the operator's lines, on stderr.
  let warnings: ServerLog
  private var core: ServerCore? = nil
  private var loops: [EventLoop] = []

  /// Event loops: a few, whatever the number of connections.
  static let loopCount = 2
  /// Workers: enough that many writers at once meet in the group commit.
  static let workerCount = 32
  /// How long stopping waits for the answers under way.
  static let stopGrace: Double = 4.5

  package init(log: EventLog, configuration: ServerConfiguration) throws(ServerError) {
    self.log = log
    self.configuration = configuration
    commits = try CommitHub(log: log)
    metrics = configuration.metrics ? Metrics() : nil
    tls = try configuration.tls.map { files throws(ServerError) in try TLSServerCredentials(files) }
    warnings = ServerLog(requests: RequestLog(format: configuration.logFormat, operatorToken: configuration.token))
    let gate = TokenGate(log: log)
    router = Router(
      routes: Routes.table(
        log: log, commits: commits, stallLimit: configuration.stallLimit, metrics: metrics,
        readiness: Readiness(log: log, warnings: warnings), gate: gate, warnings: warnings),
      policy: configuration.policy, gate: gate)
  }

  /// Starts listening; returns the port bound (the one the system chose for port 0).
  package func start() throws(ServerError) -> UInt16 {
    let limits = configuration.connectionLimits ?? .fromDescriptorLimit()
    guard let pool = WorkerPool(threads: Self.workerCount) else {
      throw ServerError("cannot start a thread: \(String(cString: strerror(errno)))")
    }
    let core = ServerCore(
      log: log, router: router, commits: commits, pool: pool, limits: limits, configuration: configuration,
      metrics: metrics, tls: tls, warnings: warnings)
    if let metrics { log.commitObservers.observer = metrics }
    var made: [EventLoop] = []
    do throws(ServerError) {
      for _ in 0..<Self.loopCount { made.append(try EventLoop(core: core)) }
      let loops = made
      let listener = try Listener(listen: configuration.listen, loops: loops)
      for loop in loops {
        guard startThread({ loop.run() }) else {
          throw ServerError("cannot start a thread: \(String(cString: strerror(errno)))")
        }
      }
      loops[0].execute {
        loops[0].listener = listener
        listener.start()
      }
      guard commits.start(onAdvance: { _ in for loop in loops { loop.headAdvanced() } }) else {
        throw ServerError("cannot start a thread: \(String(cString: strerror(errno)))")
      }
      (self.core, self.loops) = (core, loops)
      return listener.port
    } catch {
      for loop in made { loop.end() }
      pool.stop()
      if metrics != nil { log.commitObservers.observer = nil }
      throw error
    }
  }

  /// Stops: no more connections; every request already read is answered
  /// (a write that committed gets its answer), event streams end after
  /// their last complete event, idle connections close — within
  /// `stopGrace`, after which what is left is closed.
  package func stop() {
    guard let core else { return }
    core.beginStopping()
    for loop in loops { loop.beginStopping() }
    let deadline = Deadline.after(seconds: Self.stopGrace)
    while !deadline.hasPassed && loops.contains(where: { $0.connectionCount > 0 }) { usleep(10_000) }
    let cut = loops.reduce(0) { $0 + $1.connectionCount }
    if cut > 0 {
      // Their request lines will say what was sent; this says they were cut.
      warnings.warn(
        "stop",
        "stopping after \(Self.stopGrace) s: \(cut) connection\(cut == 1 ? "" : "s") closed unfinished, a request "
          + "or an answer under way (a write among them may have committed unanswered)")
    }
    for loop in loops { loop.end() }
    for loop in loops { loop.finished.wait(until: { $0 }) { _, _ in } }
    commits.stop()
    // The loops have ended: what is still queued has nobody to answer.
    core.pool.stop(droppingQueued: true)
    if metrics != nil { log.commitObservers.observer = nil }
    (self.core, self.loops) = (nil, [])
  }
}
