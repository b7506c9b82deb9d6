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
  /// The highest change of `replica` done here (every one below it is
  /// done too); 0 when none.
  func changesDone(by replica: ItemID) throws -> UInt64
  /// What was done with change `change` of `replica`; nil when not done.
  func outcome(ofChange change: UInt64, by replica: ItemID) throws -> ChangeOutcome?
  /// Every replica with its progress, in id byte order, until `body` returns false (for `verify`).
  func forEachReplica(_ body: (ItemID, UInt64) throws -> Bool) throws
  /// The outcomes of `replica`'s changes in change order, until `body` returns false (for `verify`).
  func forEachOutcome(by replica: ItemID, _ body: (UInt64, ChangeOutcome) throws -> Bool) throws
}

package protocol SyncStateWriter: LogWriter, SyncStateReader {
  func putLogID(_ id: ItemID) throws
  func putChangesDone(_ done: UInt64, by replica: ItemID) throws
  func putOutcome(_ outcome: ChangeOutcome, ofChange change: UInt64, by replica: ItemID) throws
}
