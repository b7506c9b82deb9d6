import MsglogCore

/// What an LMDB store can do beyond reading and writing (EventStore's
/// abilities): it may be a replica, loads a new log in bulk, and takes a
/// replica's sync lock. `isDisplaced` and `copy(to:compact:)` are beside
/// what they watch and copy.
extension LMDBStore {
  package var keepsReplicas: Bool { true }
  package var loadsInBulk: Bool { true }

  package func takeSyncLock() throws -> SyncLockAttempt {
    guard let lock = try lockForSync() else { return .busy }
    return .taken(lock)
  }
}
