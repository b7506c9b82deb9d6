/// What some stores can do and others cannot, asked of any store through
/// its protocol (as GRDB asks `backup(to:)` of any `DatabaseReader`): the
/// door never downcasts to a store's class, so a third store is one
/// conformance, not a hunt. Each default here is the answer of a store
/// that cannot.
extension EventStore {
  package var isDisplaced: Bool { false }
  package func isStandby() throws -> Bool { false }
  package var keepsReplicas: Bool { false }
  package var loadsInBulk: Bool { false }
  package func takeSyncLock() throws -> SyncLockAttempt { .needless }
  package func copy(to destination: String, compact: Bool) throws -> StoreCopy? { nil }
  package func purge(waiting: (String) -> Void) throws -> UInt64? { nil }
}

/// Taking a replica's sync lock: one sync at a time per replica.
package enum SyncLockAttempt {
  /// Taken, and held until this object goes.
  case taken(AnyObject)
  /// Another sync holds it.
  case busy
  /// The store keeps no replica, so a sync of it needs no lock.
  case needless
}

/// What a hot copy of a store copied: the copy is the log as of `seq`.
package struct StoreCopy: Equatable, Sendable {
  package var events: UInt64
  package var seq: UInt64
  /// The copy's data file.
  package var bytes: UInt64

  package init(events: UInt64, seq: UInt64, bytes: UInt64) {
    self.events = events
    self.seq = seq
    self.bytes = bytes
  }
}
