/// A replica taking in its remote's events (docs/SYNC.md): page after
/// page, each checked as it arrived (`PulledPage`) and taken in with what
/// it tells of the replica's own changes in one transaction, so a pull cut
/// anywhere keeps the pages before and the next goes on after them.
///
/// Whatever the remote sends that the replica cannot take in is the
/// remote's fault, named with its seq (`RemoteFault`): the replica's own
/// log is sound, and nothing of the page is kept.
extension EventLog {
  ///
  /// - Parameter horizon: where the remote's history begins (its hello's):
  ///   an empty replica of a trimmed remote starts from its bases.
  func pull(from remote: any SyncRemote, state: ReplicaState, horizon: UInt64 = 1, into report: inout SyncReport)
    throws
  {
    if horizon > 1, try headSeq() == 0 { try takeBases(from: remote, state: state, horizon: horizon) }
    while true {
      let head = try headSeq()
      let held = try headRecord()
      let page = try remote.pull(
        PullRequest(log: state.log, after: head, check: held?.withUnsafeBytes(EventRecord.headCheck)), holding: held)
      if page.records.isEmpty {
        // At the remote's head: the one head the pages bear out.
        guard page.head == head else {
          throw MsglogError.remoteFault(remote: remote.shown, .headNotBorneOut(claimed: page.head, seq: head))
        }
        try noteRemoteHead(head)
        return
      }
      report.pulled += try adopt(page, after: head, from: remote, into: &report)
    }
  }

  /// Starts this empty replica from a trimmed remote's bases, in one transaction.
  private func takeBases(from remote: any SyncRemote, state: ReplicaState, horizon: UInt64) throws {
    let bases = try remote.bases(of: state.log)
    try Self.check(bases, horizon: horizon, from: remote)
    try writing { writer in
      guard try writer.headSeq() == 0 else { throw MsglogError.replicaMovedDuringPull }
      try seed(bases, into: writer, from: remote)
    }
  }

  /// Refuses bases that do not stand where the remote's hello says its
  /// history begins, before anything is emptied for them: a trimmed log
  /// has a base for every stream (some stream had the events trimmed),
  /// all at the seq before its horizon — or a later one, the remote
  /// trimmed again since its hello.
  static func check(_ bases: [ImportedBase], horizon: UInt64, from remote: any SyncRemote) throws {
    guard horizon > 1 else { return }
    guard let first = bases.first else {
      throw MsglogError.remoteFault(
        remote: remote.shown, .basesDoNotFit(reason: "it says its history begins at seq \(horizon), yet sends none"))
    }
    if let stray = bases.first(where: { $0.seq < horizon - 1 || $0.seq != first.seq }) {
      throw MsglogError.remoteFault(
        remote: remote.shown,
        .basesDoNotFit(
          reason: "it says its history begins at seq \(horizon), yet sends a base at seq \(stray.seq)"))
    }
  }

  /// Writes a trimmed remote's bases into this replica's empty log, in the
  /// caller's transaction, as an import of them would (`LedgerSession.seed`):
  /// what does not fit is the remote's fault.
  func seed(_ bases: [ImportedBase], into writer: any LogWriter, from remote: any SyncRemote) throws {
    let session = try LedgerSession(
      writer: writer, now: configuration.clock(), checkpointInterval: UInt64(configuration.checkpointInterval))
    do {
      try session.seed(bases)
    } catch let fault as BaseFault {
      throw MsglogError.remoteFault(remote: remote.shown, .basesDoNotFit(reason: fault.error.description))
    }
    try session.finish()
  }

  /// The page's events, checked now if they were not as they arrived; what
  /// does not check is `remote`'s fault. (No log needed: `PagesAhead`
  /// checks a clone's pages on a thread of its own.)
  static func events(of page: RecordPage, after head: UInt64, from remote: any SyncRemote) throws -> [Event] {
    if let events = page.events { return events }
    var checked = PulledPage(after: head, limit: SyncProtocol.pageRecords, pageBytes: SyncProtocol.pageBytes)
    do throws(RemoteFault) {
      for record in page.records { try checked.take(record) }
      try checked.check(head: page.head)
    } catch {
      throw MsglogError.remoteFault(remote: remote.shown, error)
    }
    return checked.events
  }

  /// Takes in a page of the remote's records, in one transaction with what
  /// it tells of this replica's changes: a pending change settles when its
  /// event arrives — carrying its origin, of its item — and counts then
  /// (`pushed`, and `rebased` when it landed elsewhere than its user saw).
  /// Returns the number of events taken.
  private func adopt(_ page: RecordPage, after head: UInt64, from remote: any SyncRemote, into report: inout SyncReport)
    throws -> Int
  {
    let events = try Self.events(of: page, after: head, from: remote)
    let forgets = events.contains(where: Self.forgets)
    let settled: (pushed: Int, rebased: Int) = try writing { writer in
      // Counted here, not added to outside: a store may run this again.
      var settled = (pushed: 0, rebased: 0)
      guard let replicas = writer as? any ReplicaStateWriter, var state = try replicas.replicaState() else {
        throw MsglogError.notAReplica(location: location)
      }
      guard try writer.headSeq() == head else {
        throw MsglogError.replicaMovedDuringPull
      }
      let session = try LedgerSession(
        writer: writer, now: configuration.clock(), checkpointInterval: UInt64(configuration.checkpointInterval))
      // The blanked copies' old pages stay free, text and all, until a purge (`owingPurge`).
      if forgets { try replicas.putPurgeOwed(true) }
      var pending: [UInt64: ReplicaChange]? = nil
      for (event, record) in zip(events, page.records) {
        // The replica keeps the remote's bytes: each record in its own layout.
        guard let layout = EventRecord.layout(of: record) else {
          throw MsglogError.remoteFault(remote: remote.shown, .recordNotCanonical(seq: event.seq))
        }
        do {
          try session.adopt(event, layout: layout)
        } catch let error as MsglogError where Self.isTheRecordsFault(error) {
          throw MsglogError.unacceptableRecord(remote: remote.shown, seq: event.seq, reason: error)
        } catch MsglogError.eventDoesNotFit(let seq, let reason) where seq == event.seq {
          // Its index or version does not follow from the events before it there.
          throw MsglogError.unacceptableRecord(
            remote: remote.shown, seq: seq, reason: .eventDoesNotFit(seq: seq, reason: reason))
        }
        guard let origin = event.origin, origin.replica == state.replica else { continue }
        if pending == nil { pending = try pendingByNumber(replicas) }
        guard let change = pending?[origin.change] else {
          // Settled before (a refusal, say, that a resend cannot change).
          if try replicas.learnedOutcome(ofChange: origin.change) == nil {
            try replicas.putLearnedOutcome(.applied(seq: event.seq, rebased: false), ofChange: origin.change)
          }
          continue
        }
        // Another change under its number, made at another time: a copy of
        // this replica (restored from a backup, or copied) numbering again.
        // Not this one's: it stays pending, for `sync --reset` to send
        // under a new id (its push under this one is refused as lost track).
        guard origin.made == change.made else { continue }
        guard Self.event(event, isOf: change) else {
          throw MsglogError.remoteFault(
            remote: remote.shown,
            .outcomeNotBorneOut(
              change: change.number, seq: event.seq, found: "seq \(event.seq) is not \(change.anOpName) of its item"))
        }
        let seen = change.seenIndex
        let rebased = change.places && seen != nil && seen != Self.index(of: event)
        try replicas.putLearnedOutcome(.applied(seq: event.seq, rebased: rebased), ofChange: origin.change)
        try replicas.deletePendingChange(origin.change)
        pending?[origin.change] = nil
        settled.pushed += 1
        if rebased { settled.rebased += 1 }
      }
      try session.finish()
      state.remoteHead = max(state.remoteHead, events.last?.seq ?? head)
      try replicas.putReplicaState(state)
      return settled
    }
    report.pushed += settled.pushed
    report.rebased += settled.rebased
    return events.count
  }

  private func pendingByNumber(_ replicas: any ReplicaStateReader) throws -> [UInt64: ReplicaChange] {
    Dictionary(uniqueKeysWithValues: try LocalView.pendingChanges(in: replicas).map { ($0.number, $0) })
  }

  /// Whether `event` is what `change` appends: its op, on its item (an
  /// undo may append any op, on an item the replica resolved at the remote).
  static func event(_ event: Event, isOf change: ReplicaChange) -> Bool {
    switch (change.intent, event.op) {
    case (.append(let id, _, _, _), .insert(let item, _, _, _)),
      (.insert(let id, _, _, _, _), .insert(let item, _, _, _)),
      (.move(let id, _, _, _), .move(let item, _, _)), (.remove(let id), .remove(let item, _)),
      (.edit(let id, _, _), .edit(let item, _, _, _, _, _)), (.restore(let id, _, _), .restore(let item, _, _)):
      return id == item
    case (.undo, _): return true
    default: return false
    }
  }

  /// Whether the event makes the replica forget what it held: an erase
  /// (a text, a sender), an unsign (a sender).
  static func forgets(_ event: Event) -> Bool {
    switch event.op {
    case .erase, .unsign: return true
    case .insert, .remove, .move, .edit, .restore: return false
    }
  }

  /// Where an event put its item (the index an outcome reports).
  static func index(of event: Event) -> Int {
    switch event.op {
    case .insert(_, let index, _, _), .remove(_, let index), .restore(_, let index, _),
      .edit(_, _, _, let index, _, _):
      return Int(index)
    case .move(_, _, let to): return Int(to)
    case .erase(_, let index): return index.map { Int($0) } ?? -1
    case .unsign: return -1
    }
  }

  /// Keeps `head` as the remote's head when last seen: only a head the
  /// pages bore out (the replica reached it), never one merely claimed.
  private func noteRemoteHead(_ head: UInt64) throws {
    try writing { writer in
      guard let replicas = writer as? any ReplicaStateWriter, var state = try replicas.replicaState() else { return }
      guard state.remoteHead != head else { return }
      state.remoteHead = head
      try replicas.putReplicaState(state)
    }
  }
}
