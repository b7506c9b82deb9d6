extension EventLog {
  /// `sync --reset`: for a replica whose remote is no longer the log it
  /// copies (restored from an older copy, rebuilt by `export | import`).
  /// Keeps the pending changes, copies the remote afresh under a new
  /// replica id — the pending changes numbered again from 1, the next write
  /// taking the next number; the refusals kept under the numbers they had —
  /// then pushes them. With `movingTo`, that is the replica's remote from
  /// then on.
  package func reset(with remote: any SyncRemote, movingTo newLocation: String? = nil) throws -> SyncReport {
    guard let old = try replicaState() else { throw MsglogError.notAReplica(location: location) }
    let lock = try lockForSync()
    defer { withExtendedLifetime(lock) {} }
    remote.startRun()
    let hello = try remote.hello()
    try Self.check(hello, of: remote)
    return try resetRound(with: remote, hello: hello, old: old, movingTo: newLocation)
  }

  /// The reset, under the lock the caller holds, after `hello`.
  func resetRound(with remote: any SyncRemote, hello: RemoteHello, old: ReplicaState, movingTo newLocation: String?)
    throws -> SyncReport
  {
    guard let log = hello.log else {
      throw MsglogError.incompatibleRemote(
        remote: remote.shown, reason: "its log has no id yet (it was made by an older msglog): any write there gives it one")
    }
    let state = try startAgain(from: remote, log: log, horizon: hello.horizon, keepingLearned: false) {
      replicas, sync in
      let pending = try LocalView.pendingChanges(in: replicas)
      // The new numbers, in the order the changes were made.
      var renumbered: [UInt64: UInt64] = [:]
      for (index, change) in pending.enumerated() { renumbered[change.number] = UInt64(index + 1) }
      var kept: [ReplicaChange] = []
      for var change in pending {
        change.number = renumbered[change.number]!
        change.basis = 0
        if case .undo(.change(let earlier), let sender) = change.intent {
          if let number = renumbered[earlier] {
            change.intent = .undo(.change(number), sender: sender)
          } else if case .applied(let seq, _)? = try replicas.learnedOutcome(ofChange: earlier) {
            // Done on the old log: the new one has that event only if it has its history.
            change.intent = .undo(.event(seq: seq), sender: sender)
          }
        }
        kept.append(change)
      }
      try sync.putLogID(log)
      // Every row under its old number goes: a row past the new numbers
      // left behind would be pushed again under its old number.
      for change in pending { try replicas.deletePendingChange(change.number) }
      for change in kept { try replicas.putPendingChange(change.number, json: change.json) }
      let state = ReplicaState(
        replica: .random(), log: log, remote: newLocation ?? old.remote, nextChange: UInt64(kept.count + 1),
        secret: .random())
      try replicas.putReplicaState(state)
      return state
    }
    var report = SyncReport()
    try pull(from: remote, state: state, horizon: hello.horizon, into: &report)
    report.add(try syncRound(with: remote, state: state))
    return report
  }

  /// A replica behind a trimmed remote's horizon starts again from its
  /// bases, keeping its id, its pending changes under their numbers and
  /// the outcomes it learned, then syncs as ever. The remote keeps the
  /// outcome of every change the replica pushed, so a change it did
  /// before the trim whose answer the replica never learned (a sync cut
  /// after its push) is answered, not done again, as it would be under a
  /// new id (`reset`): its event, if past the horizon, settles it as the
  /// pull brings it; before it, the push's answer does (`learn`), for the
  /// changes pending when the restart began only.
  ///
  /// The changes are pushed first, before anything is changed here: a
  /// remote that lost track of them (restored from an older copy, then
  /// trimmed) refuses that push, and the replica then starts again as
  /// `sync --reset` does, under a new id, as a replica behind the horizon
  /// did before it kept its id.
  func restartRound(with remote: any SyncRemote, hello: RemoteHello, state: ReplicaState, movingTo location: String?)
    throws -> SyncReport
  {
    var report = SyncReport()
    do {
      var claims: [UInt64: UInt64] = [:]
      try push(to: remote, state: state, into: &report, claims: &claims)
    } catch let error as MsglogError where error.isLostTrack {
      return try resetRound(with: remote, hello: hello, old: state, movingTo: location)
    }
    let restarted = Set(try pendingChanges().map(\.number))
    try startAgain(from: remote, log: state.log, horizon: hello.horizon, keepingLearned: true) { _, _ in }
    try pull(from: remote, state: state, horizon: hello.horizon, into: &report)
    report.add(try syncRound(with: remote, state: state, movingTo: location, restarted: restarted))
    return report
  }

  /// Empties the replica's log (`clearForReset`) and takes a trimmed
  /// remote's bases, in one transaction with what `keeping` writes of what
  /// the replica keeps across (called first: it may read what the clearing
  /// drops). A start again cut anywhere leaves the replica as it was, or
  /// on the bases — never an empty list under its pending changes until a
  /// sync gets through.
  private func startAgain<R>(
    from remote: any SyncRemote, log: ItemID, horizon: UInt64, keepingLearned: Bool,
    _ keeping: (any ReplicaStateWriter, any SyncStateWriter) throws -> R
  ) throws -> R {
    let bases = horizon > 1 ? try remote.bases(of: log) : []
    return try writing { writer in
      guard let replicas = writer as? any ReplicaStateWriter, let sync = writer as? any SyncStateWriter else {
        throw MsglogError.notAReplica(location: self.location)
      }
      let kept = try keeping(replicas, sync)
      try replicas.clearForReset(keepingLearned: keepingLearned)
      try seed(bases, into: writer, from: remote)
      return kept
    }
  }
}

extension MsglogError {
  /// The remote does not hold the replica's changes as the replica does
  /// (`remoteLostTrack` over HTTP; the ledger's own errors in process).
  var isLostTrack: Bool {
    switch self {
    case .remoteLostTrack, .changeOutOfOrder, .changeForgotten: return true
    default: return false
    }
  }
}

extension EventLog.SyncReport {
  /// Adds what a later round of the same sync did.
  mutating func add(_ round: Self) {
    pushed += round.pushed
    rebased += round.rebased
    refused += round.refused
    pulled += round.pulled
    seq = round.seq
  }
}
