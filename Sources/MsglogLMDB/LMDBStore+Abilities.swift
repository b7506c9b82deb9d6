import MsglogCore

/// What an LMDB store can do beyond reading and writing (EventStore's
/// abilities): it may be a replica, loads a new log in bulk, and takes a
/// replica's sync lock. `isDisplaced` and `copy(to:compact:)` are beside
/// what they watch and copy.
extension LMDBStore {
  package var keepsReplicas: Bool { true }
  package var loadsInBulk: Bool { true }

  /// Also sweeps what a clone killed after putting the replica's data file
  /// in place left inside its directory (the staging directory and its
  /// `lock.mdb`): nothing else writes there once the replica exists, and
  /// a sync is where a replica's user comes back.
  package func takeSyncLock() throws -> SyncLockAttempt {
    guard let lock = try lockForSync() else { return .busy }
    DatabaseFiles.sweepStaging(for: path)
    return .taken(lock)
  }
}
