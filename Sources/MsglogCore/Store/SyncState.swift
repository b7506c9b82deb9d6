/// What a log keeps for sync beside its events (docs/SYNC.md): its own id,
/// and, as a remote, each replica's progress and the outcome of every
/// change it did — written in the transaction of the change itself, so a
/// change is done at most once however often it is sent.
///
/// A store that keeps these conforms; the in-memory store, LMDB and
/// PostgreSQL do.
package protocol SyncStateReader: LogReader {
  /// The log's id, made with the database; nil for a log made before
  /// logs had one (it gets one with its next write).
  func logID() throws -> ItemID?
  /// What is kept of `replica` here: its changes done, the outcomes kept,
  /// its secret's hash; nil for a replica that never pushed here.
  func progress(of replica: ItemID) throws -> ReplicaProgress?
  /// What was done with change `change` of `replica`; nil when not done.
  func outcome(ofChange change: UInt64, by replica: ItemID) throws -> ChangeOutcome?
  /// Every replica with its progress, in id byte order, until `body` returns false (for `verify`).
  func forEachReplica(_ body: (ItemID, ReplicaProgress) throws -> Bool) throws
  /// The outcomes of `replica`'s changes in change order, until `body` returns false (for `verify`).
  func forEachOutcome(by replica: ItemID, _ body: (UInt64, ChangeOutcome) throws -> Bool) throws
  /// What sync's bookkeeping holds: replicas, outcomes and their bytes
  /// (`streams`, `/metrics`): what refused changes cost, which no event shows.
  func syncBookkeeping() throws -> SyncBookkeeping
}

package protocol SyncStateWriter: LogWriter, SyncStateReader {
  func putLogID(_ id: ItemID) throws
  func putProgress(_ progress: ReplicaProgress, of replica: ItemID) throws
  func putOutcome(_ outcome: ChangeOutcome, ofChange change: UInt64, by replica: ItemID) throws
  /// Forgets the outcomes of `replica`'s changes `range` that appended
  /// nothing (refused or unchanged); the applied ones stay.
  func forgetUnappliedOutcomes(by replica: ItemID, in range: Range<UInt64>) throws
}

/// The size of sync's bookkeeping at a remote.
package struct SyncBookkeeping: Equatable, Sendable {
  /// Replica ids that pushed here.
  package var replicas: UInt64 = 0
  /// Outcomes kept (applied, unchanged and refused).
  package var outcomes: UInt64 = 0
  /// What the two take on disk, as the store counts it (LMDB's pages,
  /// PostgreSQL's relation sizes); 0 where it cannot tell (in memory).
  package var bytes: UInt64 = 0

  package init(replicas: UInt64 = 0, outcomes: UInt64 = 0, bytes: UInt64 = 0) {
    self.replicas = replicas
    self.outcomes = outcomes
    self.bytes = bytes
  }
}
