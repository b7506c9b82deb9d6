import MsglogPostgres

/// How a replica reaches its remote: the bearer token a `msglog serve`
/// wants, the certificate authority an `https://` remote is checked
/// against (the system's roots when nil), and how long a slow remote is
/// waited for. None of it is kept in the replica: a secret stays with
/// whoever runs the sync.
public struct SyncOptions: Sendable {
  public var token: String?
  /// A PEM file of certificate authorities, for a server whose certificate
  /// the system does not trust (a team's own).
  public var caFile: String?
  /// The longest a whole run may take with an `http(s)://` remote — a
  /// clone, a sync, one round of a live sync — in seconds: a remote that
  /// answers, however slowly, cannot hold a sync (and its lock) for ever.
  public var timeout: Double
  /// The longest one exchange may take (a hello, a push, one page of a
  /// pull, each at most a few MiB), in seconds.
  public var exchangeTimeout: Double
  /// The monotonic clock a live sync reads to know when to try again a
  /// purge that a read kept from finishing (`EventLog.purgeRetry`): the
  /// tests move it by hand.
  package var clock: @Sendable () -> Deadline = { Deadline.now() }

  /// `timeout`'s default: 15 minutes.
  public static let defaultTimeout: Double = 900
  /// `exchangeTimeout`'s default: 2 minutes.
  public static let defaultExchangeTimeout: Double = 120

  public init(
    token: String? = nil, caFile: String? = nil, timeout: Double = SyncOptions.defaultTimeout,
    exchangeTimeout: Double = SyncOptions.defaultExchangeTimeout
  ) {
    self.token = token
    self.caFile = caFile
    self.timeout = timeout
    self.exchangeTimeout = exchangeTimeout
  }
}

extension EventLog {
  /// The remote at `location`: a `postgres://` log, opened in process, or
  /// the `http://`/`https://` address of a `msglog serve`.
  package static func remote(at location: String, options: SyncOptions) throws -> any SyncRemote {
    if PostgresStore.handles(location) { return LogRemote(try EventLog(location)) }
    if location.hasPrefix("http://") || location.hasPrefix("https://") {
      return try HTTPRemote(location, options: options)
    }
    throw MsglogError.invalidInput(.remoteLocation(location))
  }

  /// Whether `options`' token would travel to `location` unencrypted and
  /// beyond this machine: an `http://` address whose host is not a
  /// loopback one (anyone on the way can read it).
  public static func sendsTokenInTheClear(to location: String, options: SyncOptions) -> Bool {
    options.token != nil && HTTPRemote.isPlainAndBeyondLoopback(location)
  }

  /// Makes `location` a replica of the log at `remote` (see
  /// `clone(from:remoteLocation:into:configuration:)`).
  public static func clone(
    _ remote: String, into location: String, options: SyncOptions = SyncOptions(),
    configuration: Configuration = Configuration()
  ) throws -> CloneReport {
    try clone(
      from: try EventLog.remote(at: remote, options: options), remoteLocation: remote, into: location,
      configuration: configuration)
  }

  /// Syncs the replica with its remote: pushes its pending changes in
  /// order, pulls every event it lacks, until nothing is pending and it is
  /// at the remote's head. Safe to cut anywhere; the next sync goes on.
  ///
  /// - Parameter movingTo: another address of the remote (the log moved,
  ///   or is reached another way now): synced with, and kept for later
  ///   syncs, once it is found to hold this replica's log at or past its
  ///   head. Nothing is kept when it does not.
  public func sync(options: SyncOptions = SyncOptions(), movingTo location: String? = nil) throws -> SyncReport {
    guard let state = try replicaState() else { throw MsglogError.notAReplica(location: self.location) }
    return try sync(with: try EventLog.remote(at: location ?? state.remote, options: options), movingTo: location)
  }
}

extension EventLog {
  /// `sync --reset` with the replica's remote (see `reset(with:)`); with
  /// `movingTo`, with the log at that address, kept from then on.
  public func resetReplica(options: SyncOptions = SyncOptions(), movingTo location: String? = nil) throws
    -> SyncReport
  {
    guard let state = try replicaState() else { throw MsglogError.notAReplica(location: self.location) }
    return try reset(with: try EventLog.remote(at: location ?? state.remote, options: options), movingTo: location)
  }
}
