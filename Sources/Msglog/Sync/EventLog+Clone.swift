import MsglogLMDB

#if canImport(Glibc)
  import Glibc
#endif

extension EventLog {
  /// What a clone made.
  public struct CloneReport: Equatable, Sendable {
    /// The events copied.
    public var cloned: Int
    /// The replica's head (the remote's when it was copied).
    public var seq: UInt64
    /// The remote, as messages show it (credentials redacted).
    public var remote: String
    /// Whether it was built as an import builds a new database (`bulkPull`).
    package var builtInBulk = false
  }

  /// Makes `location` (an LMDB directory that does not exist or is empty) a
  /// replica of `remote`'s log: every event of every stream with its seq,
  /// version and time, under a new replica id. Built beside `location` and
  /// put there only when whole: a clone cut short leaves it as it was.
  ///
  /// - Parameter remoteLocation: the remote as given, kept for `sync`.
  /// - Parameter inBulk: false takes every event through the ledger (the
  ///   tests compare the two ways).
  package static func clone(
    from remote: any SyncRemote, remoteLocation: String, into location: String,
    configuration: Configuration = Configuration(), inBulk: Bool = true
  ) throws -> CloneReport {
    // What killed clones left here is swept first, so it does not count as content.
    DatabaseFiles.sweepStaging(for: location)
    switch PathKind.of(location) {
    case .missing: break
    case .file: throw MsglogError.cannotClone(location: location, reason: "it is a file")
    case .directory:
      guard DatabaseFiles.isEmptyDirectory(location) else {
        throw MsglogError.cannotClone(location: location, reason: "it is not an empty directory")
      }
    }
    remote.startRun()
    let hello = try remote.hello()
    try check(hello, of: remote)
    guard let logID = hello.log else {
      throw MsglogError.cannotClone(
        location: location,
        reason: "the log at \(remote.shown) has no id yet (it was made by an older msglog): any write there gives it one")
    }
    let appeared = MsglogError.cannotClone(location: location, reason: "a database appeared there meanwhile")
    // What killed clones (and first writes) left for this path goes first, as a first write sweeps it.
    DatabaseFiles.sweepStaging(for: location)
    // Beside a missing path, or inside an empty directory (a mount point
    // stays one); removed when this scope ends, and by a signal meanwhile.
    guard let staging = try StagingDirectory.make(for: location, purpose: .cloning, shown: location) else {
      throw appeared
    }
    var cloned = 0
    var seq: UInt64 = 0
    var builtInBulk = false
    // The replica is closed when this scope ends, before it is put in place.
    do {
      let replica = try EventLog(staging.path, configuration: configuration)
      try replica.writing { writer in
        guard let replicas = writer as? any ReplicaStateWriter, let sync = writer as? any SyncStateWriter else {
          throw MsglogError.cannotClone(location: location, reason: "a replica needs an LMDB directory")
        }
        try sync.putLogID(logID)
        // The remote's head is kept once the pull reaches it, not as the hello claims it.
        try replicas.putReplicaState(
          ReplicaState(replica: .random(), log: logID, remote: remoteLocation, secret: .random()))
      }
      // In bulk, as import builds a new database, when the log is one the
      // bulk path builds; else (nothing was committed) through the ledger.
      // A trimmed remote's clone starts from its bases, through the ledger.
      if inBulk, hello.horizon == 1, let pulled = try replica.bulkPull(from: remote, claimed: hello.head) {
        (cloned, builtInBulk) = (pulled, true)
      } else {
        var report = SyncReport()
        let state = try replica.replicaState()!
        try replica.pull(from: remote, state: state, horizon: hello.horizon, into: &report)
        cloned = report.pulled
      }
      seq = try replica.headSeq()
      // A new file that took the remote's records as they are (an erased
      // one blank already) holds nothing an erase or a trim left behind.
      try replica.writing { writer in try (writer as? any ReplicaStateWriter)?.putPurgeOwed(false) }
    }
    guard try DatabaseFiles.install(staging.path, at: location) else { throw appeared }
    return CloneReport(cloned: cloned, seq: seq, remote: remote.shown, builtInBulk: builtInBulk)
  }
}
