/// Sync's tables in memory, as LMDB keeps them (`LMDBStore+Sync`).
extension MemoryStore {
  package struct SyncTables: Sendable {
    package var logID: ItemID? = .random()
    package var progress: [ItemID: ReplicaProgress] = [:]
    package var outcomes: [ItemID: [UInt64: ChangeOutcome]] = [:]
    package var replica: ReplicaState? = nil
    package var pending: [UInt64: [UInt8]] = [:]
    package var learned: [UInt64: ChangeOutcome] = [:]
    package var refused: [UInt64: [UInt8]] = [:]
    package var savedView: [UInt8]? = nil
    package var purgeOwed = false
  }
}

extension MemoryStore.Transaction: SyncStateWriter, ReplicaStateWriter {
  func logID() throws -> ItemID? { state.sync.logID }
  func putLogID(_ id: ItemID) throws { state.sync.logID = id }

  func progress(of replica: ItemID) throws -> ReplicaProgress? { state.sync.progress[replica] }
  func putProgress(_ progress: ReplicaProgress, of replica: ItemID) throws { state.sync.progress[replica] = progress }

  func forgetUnappliedOutcomes(by replica: ItemID, in range: Range<UInt64>) throws {
    state.sync.outcomes[replica] = state.sync.outcomes[replica]?.filter { change, outcome in
      if case .applied = outcome { return true }
      return !range.contains(change)
    }
  }

  func syncBookkeeping() throws -> SyncBookkeeping {
    SyncBookkeeping(
      replicas: UInt64(state.sync.progress.count),
      outcomes: UInt64(state.sync.outcomes.values.reduce(0) { $0 + $1.count }))
  }

  func outcome(ofChange change: UInt64, by replica: ItemID) throws -> ChangeOutcome? {
    state.sync.outcomes[replica]?[change]
  }

  func putOutcome(_ outcome: ChangeOutcome, ofChange change: UInt64, by replica: ItemID) throws {
    state.sync.outcomes[replica, default: [:]][change] = outcome
  }

  func forEachReplica(_ body: (ItemID, ReplicaProgress) throws -> Bool) throws {
    for (replica, progress) in state.sync.progress.sorted(by: { ItemID.precedesInStorageOrder($0.key, $1.key) }) {
      guard try body(replica, progress) else { return }
    }
  }

  func forEachOutcome(by replica: ItemID, _ body: (UInt64, ChangeOutcome) throws -> Bool) throws {
    for (change, outcome) in (state.sync.outcomes[replica] ?? [:]).sorted(by: { $0.key < $1.key }) {
      guard try body(change, outcome) else { return }
    }
  }

  func replicaState() throws -> ReplicaState? { state.sync.replica }
  func putReplicaState(_ replica: ReplicaState) throws { state.sync.replica = replica }

  func forEachPendingChange(_ body: (UInt64, [UInt8]) throws -> Bool) throws {
    for (change, json) in state.sync.pending.sorted(by: { $0.key < $1.key }) {
      guard try body(change, json) else { return }
    }
  }

  func putPendingChange(_ change: UInt64, json: [UInt8]) throws { state.sync.pending[change] = json }
  func deletePendingChange(_ change: UInt64) throws {
    state.sync.pending[change] = nil
    state.sync.savedView = nil
  }
  func pendingChangeCount() throws -> UInt64 { UInt64(state.sync.pending.count) }
  func savedLocalView() throws -> [UInt8]? { state.sync.savedView }
  func putSavedLocalView(_ view: [UInt8]?) throws { state.sync.savedView = view }
  func purgeIsOwed() throws -> Bool { state.sync.purgeOwed }
  func putPurgeOwed(_ owed: Bool) throws { state.sync.purgeOwed = owed }

  func learnedOutcome(ofChange change: UInt64) throws -> ChangeOutcome? { state.sync.learned[change] }
  func putLearnedOutcome(_ outcome: ChangeOutcome, ofChange change: UInt64) throws {
    state.sync.learned[change] = outcome
  }

  func forEachRefused(_ body: (UInt64, [UInt8]) throws -> Bool) throws {
    for (entry, json) in state.sync.refused.sorted(by: { $0.key < $1.key }) {
      guard try body(entry, json) else { return }
    }
  }

  func appendRefused(json: [UInt8]) throws {
    state.sync.refused[(state.sync.refused.keys.max() ?? 0) + 1] = json
  }
  func clearRefused() throws { state.sync.refused.removeAll() }

  func clearForReset(keepingLearned: Bool) throws {
    try clearDerived()
    state.sync.savedView = nil
    state.records.removeAll()
    if !keepingLearned { state.sync.learned.removeAll() }
    state.sync.progress.removeAll()
    state.sync.outcomes.removeAll()
  }
}
