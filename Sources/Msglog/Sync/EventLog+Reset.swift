extension EventLog {
  /// `sync --reset`: for a replica whose remote is no longer the log it
  /// copies (restored from an older copy, rebuilt by `export | import`).
  /// Keeps the pending changes, copies the remote afresh under a new
  /// replica id — the pending changes numbered again from 1, the next write
  /// taking the next number; the refusals kept under the numbers they had —
  /// then pushes them. With `movingTo`, that is the replica's remote from
  /// then on.
  ///
  /// A remote that still holds the replica's log (its id, its event at the
  /// replica's head) is synced with first, under the old id: a change it
  /// did whose answer was lost (a sync cut after its push) is answered
  /// there, where under a new id it would be done a second time. What is
  /// left pending — nothing, unless the remote lost track of the old id or
  /// another holds it — is numbered again as above.
  package func reset(with remote: any SyncRemote, movingTo newLocation: String? = nil) throws -> SyncReport {
    guard let old = try replicaState() else { throw MsglogError.notAReplica(location: location) }
    let lock = try lockForSync()
    defer { withExtendedLifetime(lock) {} }
    remote.startRun()
    return try owingPurge { try reset(with: remote, old: old, movingTo: newLocation) }
  }

  /// The reset, under the lock the caller holds.
  private func reset(with remote: any SyncRemote, old: ReplicaState, movingTo newLocation: String?) throws
    -> SyncReport
  {
    let hello = try remote.hello()
    try Self.check(hello, of: remote)
    var report = SyncReport()
    if hello.log == old.log, try pendingCount() > 0 {
      let inFlight = ClaimsInFlight()
      do {
        report = try syncRound(with: remote, state: old, movingTo: newLocation, inFlight: inFlight)
      } catch let error as MsglogError
        where !inFlight.any && (error.isAnotherLog || error.isLostTrack || error.isSecretRefused)
      {
        // Not the log, or not the id, the changes were made for, and no
        // change of theirs awaits its event: the reset is what mends that.
        // (With one awaiting, the failure is said: a new id would do it twice.)
        // A round that had started again under a new id already failed
        // under that one: said too.
        guard try replicaState()?.replica == old.replica else { throw error }
      }
      // That round may have started again under a new id already (a
      // remote that lost track of it, behind a trimmed horizon).
      if try replicaState()?.replica != old.replica { return report }
    }
    report.add(
      try resetRound(with: remote, hello: try remote.hello(), old: try replicaState() ?? old, movingTo: newLocation))
    return report
  }

  /// The reset, under the lock the caller holds, after `hello`.
  func resetRound(with remote: any SyncRemote, hello: RemoteHello, old: ReplicaState, movingTo newLocation: String?)
    throws -> SyncReport
  {
    guard let log = hello.log else {
      throw MsglogError.incompatibleRemote(
        remote: remote.shown,
        reason: "its log has no id yet (it was made by an older msglog): any write there gives it one")
    }
    // An undo written meanwhile (writes take no sync lock) was not checked:
    // the check is made again, with it.
    for _ in 0..<5 {
      let undone = try undoneEvents()
      var theirs: [UInt64: RemoteEvent] = [:]
      for seq in undone.frames.keys { theirs[seq] = try remoteEvent(at: seq, of: log, hello: hello, from: remote) }
      let started: (ReplicaState, [RefusedChange])
      do {
        started = try startAgain(from: remote, log: log, horizon: hello.horizon, keepingLearned: false) {
          replicas, sync in
          let pending = try LocalView.pendingChanges(in: replicas)
          // Thrown, so that the transaction changes nothing. (Any other
          // change written meanwhile is numbered with the rest.)
          let unseenUndo = pending.contains { change in
            guard case .undo = change.intent else { return false }
            return !undone.changes.contains(change.number)
          }
          guard !unseenUndo else {
            throw MsglogError.changedDuringRead(location: self.location)
          }
          let (kept, refusals) = try Self.renumber(pending, in: replicas) { seq in
            guard let known = theirs[seq], known != .unknown else { return true }
            // No record of it here (before the replica's own horizon):
            // nothing shows the remote's is the same.
            guard let mine = undone.frames[seq] ?? nil else { return false }
            return known == .frame(mine)
          }
          try sync.putLogID(log)
          // Every row under its old number goes: a row past the new numbers
          // left behind would be pushed again under its old number.
          for change in pending { try replicas.deletePendingChange(change.number) }
          for change in kept { try replicas.putPendingChange(change.number, json: change.json) }
          for refusal in refusals { try replicas.appendRefused(json: Self.json(of: refusal)) }
          let state = ReplicaState(
            replica: .random(), log: log, remote: newLocation ?? old.remote, nextChange: UInt64(kept.count + 1),
            secret: .random())
          try replicas.putReplicaState(state)
          return (state, refusals)
        }
      } catch let error as MsglogError {
        guard case .changedDuringRead = error else { throw error }
        continue
      }
      let (state, refusals) = started
      var report = SyncReport()
      // Done for good, as a refusal by the remote is.
      report.pushed = refusals.count
      report.refused = refusals
      try pull(from: remote, state: state, horizon: hello.horizon, into: &report)
      report.add(try syncRound(with: remote, state: state))
      return report
    }
    throw MsglogError.changedDuringRead(location: location)
  }

  /// The pending changes numbered again from 1, in the order they were
  /// made, and those refused instead: an undo of an event the remote does
  /// not hold (`holds(seq)` false: another event there, or none), and an
  /// undo of a change that appended nothing (refused, changed nothing, or
  /// refused here), which under its old number would name another change.
  private static func renumber(
    _ pending: [ReplicaChange], in replicas: any ReplicaStateReader, holds: (UInt64) -> Bool
  ) throws -> (kept: [ReplicaChange], refused: [RefusedChange]) {
    var renumbered: [UInt64: UInt64] = [:]
    var kept: [ReplicaChange] = []
    var refused: [RefusedChange] = []
    for var change in pending {
      var reason: MsglogError? = nil
      if case .undo(let target, let sender) = change.intent {
        if case .change(let earlier) = target, let number = renumbered[earlier] {
          change.intent = .undo(.change(number), sender: sender)
        } else if let seq = try undoneSeq(of: target, in: replicas) {
          // Done on the old log: the new one has that event only if it has its history.
          change.intent = .undo(.event(seq: seq), sender: sender)
          if !holds(seq) { reason = .undoneEventNotInLog(seq: seq) }
        } else if case .change(let earlier) = target {
          reason = .changeAppendedNothing(change: earlier)
        }
      }
      if let reason {
        refused.append(
          RefusedChange(change: change.number, op: change.opName, stream: change.stream, reason: .error(reason)))
        continue
      }
      renumbered[change.number] = UInt64(kept.count + 1)
      change.number = UInt64(kept.count + 1)
      change.basis = 0
      kept.append(change)
    }
    return (kept, refused)
  }

  /// The seq of the event an undo undoes: named, or its change's as the
  /// remote did it; nil for a change still pending or that appended nothing.
  private static func undoneSeq(of target: ReplicaChange.UndoTarget, in replicas: any ReplicaStateReader) throws
    -> UInt64?
  {
    switch target {
    case .event(let seq): return seq
    case .change(let earlier):
      guard case .applied(let seq, _)? = try replicas.learnedOutcome(ofChange: earlier) else { return nil }
      return seq
    }
  }

  /// The pending changes' numbers, and the events their undos undo by seq,
  /// each with the checksum of its frame in the replica's log before the
  /// reset (`EventRecord.frameCheck`: an erasure since leaves it as it
  /// was), or nil where the replica holds no record of it.
  private func undoneEvents() throws -> (changes: Set<UInt64>, frames: [UInt64: UInt32?]) {
    try readingBase { reader in
      guard let replicas = reader as? any ReplicaStateReader else { return ([], [:]) }
      var changes: Set<UInt64> = []
      var frames: [UInt64: UInt32?] = [:]
      for change in try LocalView.pendingChanges(in: replicas) {
        changes.insert(change.number)
        guard case .undo(let target, _) = change.intent, let seq = try Self.undoneSeq(of: target, in: replicas)
        else { continue }
        frames[seq] = .some(try reader.withRecord(at: seq) { EventRecord.frameCheck($0) } ?? nil)
      }
      return (changes, frames)
    }
  }

  /// What the remote holds at the seq an undo undoes.
  private enum RemoteEvent: Equatable {
    /// Before its horizon: its history is gone there, and the remote
    /// refuses the undo itself.
    case unknown
    /// Past its head at the hello: not the event the replica saw.
    case none
    /// The checksum of its record's frame.
    case frame(UInt32)
  }

  private func remoteEvent(at seq: UInt64, of log: ItemID, hello: RemoteHello, from remote: any SyncRemote) throws
    -> RemoteEvent
  {
    guard seq >= hello.horizon else { return .unknown }
    guard seq <= hello.head else { return .none }
    guard let (bytes, _) = try remote.record(at: seq, of: log),
      let frame = bytes.withUnsafeBytes(EventRecord.frameCheck)
    else {
      throw MsglogError.remoteFault(remote: remote.shown, .headNotBorneOut(claimed: hello.head, seq: seq - 1))
    }
    return .frame(frame)
  }

  /// A replica behind a trimmed remote's horizon starts again from its
  /// bases, keeping its id, its pending changes under their numbers and
  /// the outcomes it learned, then syncs as ever. The remote keeps the
  /// outcome of every change the replica pushed, so a change it did
  /// before the trim whose answer the replica never learned (a sync cut
  /// after its push) is answered, not done again, as it would be under a
  /// new id (`reset`).
  ///
  /// The changes are pushed first, before anything is changed here: a
  /// remote that lost track of them (restored from an older copy, then
  /// trimmed) refuses that push, and the replica then starts again as
  /// `sync --reset` does, under a new id — as it does with nothing
  /// pending, when there is nothing to answer under the old one. A change
  /// the push's answer says became an event at or past the horizon is
  /// settled by the pull that brings it; one before the horizon, whose
  /// event went with the history, in the transaction that takes the bases
  /// (`settle`), so that a sync cut after it leaves nothing that only this
  /// round could settle.
  func restartRound(
    with remote: any SyncRemote, hello: RemoteHello, state: ReplicaState, movingTo location: String?,
    inFlight: ClaimsInFlight? = nil
  ) throws -> SyncReport {
    guard try pendingCount() > 0 else {
      return try resetRound(with: remote, hello: hello, old: state, movingTo: location)
    }
    var report = SyncReport()
    var claims: [UInt64: Claim] = [:]
    do {
      try push(to: remote, state: state, into: &report, claims: &claims, inFlight: inFlight)
    } catch let error as MsglogError where error.isLostTrack {
      // A batch the remote applied before it lost track awaits its event:
      // under a new id it would be done twice. Said, not reset.
      guard claims.isEmpty else { throw error }
      return try resetRound(with: remote, hello: hello, old: state, movingTo: location)
    } catch MsglogError.pushRefused {
      // Refused whole, nothing done: the replica starts again from the
      // bases all the same (an erase there must reach it), and the round
      // after, pushing again, pulls and says the refusal.
    }
    // Assigned, not added to, in the transaction: a store may run it again.
    var settled = (pushed: 0, rebased: 0)
    try startAgain(
      from: remote, log: state.log, horizon: hello.horizon, keepingLearned: true, before: { _, _ in },
      after: { writer, replicas in settled = try self.settle(claims, in: writer, replicas, from: remote) })
    report.pushed += settled.pushed
    report.rebased += settled.rebased
    try pull(from: remote, state: state, horizon: hello.horizon, into: &report)
    try check(claims, of: remote, state: state)
    inFlight?.any = false
    report.add(try syncRound(with: remote, state: state, movingTo: location, inFlight: inFlight))
    return report
  }

  /// Settles the claimed changes the remote did before the horizon of the
  /// bases just taken (the remote's as they were read, which a trim since
  /// the hello may have moved on), in the transaction that took them, for
  /// they stand for those changes' events. An insert's item keeps its seq
  /// for good: one the bases do not hold at that seq is the remote's
  /// fault, and nothing is taken in. Of the other changes a trim keeps
  /// nothing sure to check. Returns how many it settled, and rebased.
  private func settle(
    _ claims: [UInt64: Claim], in writer: any LogWriter, _ replicas: any ReplicaStateWriter,
    from remote: any SyncRemote
  ) throws -> (pushed: Int, rebased: Int) {
    let horizon = try writer.horizon().seq
    var settled = (pushed: 0, rebased: 0)
    for change in try LocalView.pendingChanges(in: replicas) {
      guard let claim = claims[change.number], claim.seq < horizon else { continue }
      if let id = change.insertedID, try writer.idEntry(id)?.insertSeq != claim.seq {
        throw MsglogError.remoteFault(
          remote: remote.shown,
          .outcomeNotBorneOut(
            change: change.number, seq: claim.seq, found: "its bases hold no item \(id.text) inserted there"))
      }
      try replicas.putLearnedOutcome(.applied(seq: claim.seq, rebased: claim.rebased), ofChange: change.number)
      try replicas.deletePendingChange(change.number)
      settled.pushed += 1
      if claim.rebased { settled.rebased += 1 }
    }
    return settled
  }

  /// Empties the replica's log (`clearForReset`) and takes a trimmed
  /// remote's bases, in one transaction with what `keeping` writes of what
  /// the replica keeps across (called first: it may read what the clearing
  /// drops) and what `settling` writes once the bases are in. A start
  /// again cut anywhere leaves the replica as it was, or on the bases —
  /// never an empty list under its pending changes until a sync gets
  /// through.
  private func startAgain<R>(
    from remote: any SyncRemote, log: ItemID, horizon: UInt64, keepingLearned: Bool,
    before keeping: (any ReplicaStateWriter, any SyncStateWriter) throws -> R,
    after settling: (any LogWriter, any ReplicaStateWriter) throws -> Void = { _, _ in }
  ) throws -> R {
    let bases = horizon > 1 ? try remote.bases(of: log) : []
    try Self.check(bases, horizon: horizon, from: remote)
    return try writing { writer in
      guard let replicas = writer as? any ReplicaStateWriter, let sync = writer as? any SyncStateWriter else {
        throw MsglogError.notAReplica(location: self.location)
      }
      let kept = try keeping(replicas, sync)
      try replicas.clearForReset(keepingLearned: keepingLearned)
      // The old copy's pages stay free, texts and all, until a purge (`owingPurge`).
      try replicas.putPurgeOwed(true)
      try seed(bases, into: writer, from: remote)
      // The bases bear out the remote's head as far as their seq.
      if var state = try replicas.replicaState(), state.remoteHead < (try writer.headSeq()) {
        state.remoteHead = try writer.headSeq()
        try replicas.putReplicaState(state)
      }
      try settling(writer, replicas)
      return kept
    }
  }
}
