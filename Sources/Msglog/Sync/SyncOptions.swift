import MsglogPostgres

/// How a replica reaches its remote: the bearer token a `msglog serve`
/// wants, and the certificate authority an `https://` remote is checked
/// against (the system's roots when nil). Neither is kept in the replica:
/// a secret stays with whoever runs the sync.
public struct SyncOptions: Sendable {
  public var token: String?
  /// A PEM file of certificate authorities, for a server whose certificate
  /// the system does not trust (a team's own).
  public var caFile: String?

  public init(token: String? = nil, caFile: String? = nil) {
    self.token = token
    self.caFile = caFile
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

  /// Syncs the replica with the remote it was cloned from: pushes its
  /// pending changes in order, pulls every event it lacks, until nothing is
  /// pending and it is at the remote's head. Safe to cut anywhere; the next
  /// sync goes on.
  public func sync(options: SyncOptions = SyncOptions()) throws -> SyncReport {
    guard let state = try replicaState() else { throw MsglogError.notAReplica(location: location) }
    return try sync(with: try EventLog.remote(at: state.remote, options: options))
  }
}

extension EventLog {
  /// `sync --reset` with the remote the replica was cloned from (see `reset(with:)`).
  public func resetReplica(options: SyncOptions = SyncOptions()) throws -> SyncReport {
    guard let state = try replicaState() else { throw MsglogError.notAReplica(location: location) }
    return try reset(with: try EventLog.remote(at: state.remote, options: options))
  }
}
