/// What a replica keeps beside the events it copied from its remote
/// (docs/SYNC.md): its state, its pending changes (as JSON, in the order
/// they were made), what it learned of their outcomes, and the refusals it
/// shows until they are cleared. LMDB and the in-memory store keep these.
package protocol ReplicaStateReader: LogReader {
  /// Nil for a log that is not a replica.
  func replicaState() throws -> ReplicaState?
  func forEachPendingChange(_ body: (UInt64, [UInt8]) throws -> Bool) throws
  func learnedOutcome(ofChange change: UInt64) throws -> ChangeOutcome?
  /// The refusals in the order they were learned, each with its entry
  /// number (not its change's: a reset numbers the pending changes again
  /// from 1, and the refusals it keeps stay as they were).
  func forEachRefused(_ body: (UInt64, [UInt8]) throws -> Bool) throws
  /// How many changes are pending (the count, not a walk).
  func pendingChangeCount() throws -> UInt64
  /// The local view the last local write left (`SavedLocalView`), if any.
  func savedLocalView() throws -> [UInt8]?
  /// Whether a purge is owed (`SyncRows.purgeOwedKey`).
  func purgeIsOwed() throws -> Bool
}

package protocol ReplicaStateWriter: LogWriter, ReplicaStateReader {
  func putReplicaState(_ state: ReplicaState) throws
  func putPendingChange(_ change: UInt64, json: [UInt8]) throws
  func deletePendingChange(_ change: UInt64) throws
  func putLearnedOutcome(_ outcome: ChangeOutcome, ofChange change: UInt64) throws
  /// Keeps a refusal after those learned before it (its JSON names its
  /// change).
  func appendRefused(json: [UInt8]) throws
  func clearRefused() throws
  /// Keeps `view` as the local view (`SavedLocalView`); nil drops it.
  func putSavedLocalView(_ view: [UInt8]?) throws
  /// Marks a purge owed, or paid.
  func putPurgeOwed(_ owed: Bool) throws
  /// Empties the log and everything derived from it, and the outcomes
  /// learned unless `keepingLearned`: what `sync --reset` does before
  /// copying its remote afresh (the pending changes and refusals stay).
  /// A replica behind a trimmed remote's horizon keeps its id, and so the
  /// outcomes learned under it (`EventLog.restartRound`).
  func clearForReset(keepingLearned: Bool) throws
}
