/// A log as a replica's remote (docs/SYNC.md): the three calls of the sync
/// protocol, which `msglog serve` answers over HTTP and a replica makes in
/// process on a `postgres://` log.
extension EventLog {
  /// What this log says to a replica first.
  package func syncHello() throws -> RemoteHello {
    try remoteRead { sync in
      RemoteHello(
        protocolVersion: SyncProtocol.version, recordFormat: Int(EventRecord.newestFormat(in: sync.recordLayout)),
        log: try sync.logID(),
        head: try sync.headSeq(), horizon: try sync.horizon().seq)
    }
  }

  /// Does a replica's pushed changes, in order, each at most once, in one
  /// transaction, once the replica has proved it is itself (its secret):
  /// the outcome of every change (the stored one for a change done before)
  /// and the head after. The log's commit observer (a server's metrics) is
  /// told of the transaction as of one the group commit makes.
  ///
  /// - Parameter pusher: the named token the push came through: a replica
  ///   belongs to the token that first pushed for it (another's push is
  ///   refused whole, nothing done), and each change is refused where the
  ///   token may not write and recorded as sent by its name.
  package func doChanges(_ request: PushRequest, as pusher: NamedToken? = nil) throws -> PushAnswer {
    let changes = request.changes
    let started = ContinuousClock.now
    var appended = 0
    defer {
      commitObservers.observer?.committed(writes: 1, events: appended, duration: ContinuousClock.now - started)
    }
    let answer = try write(touching: Array(Set(changes.map(\.stream))).sorted()) { session in
      guard let sync = session.writer as? any SyncStateWriter else {
        throw MsglogError.incompatibleRemote(remote: location, reason: "its store keeps no sync state")
      }
      try checkRemote(sync, log: request.log)
      if let pusher {
        guard let owners = session.writer as? any TokenTableWriter else {
          throw MsglogError.namedToken(.notKept(location: location))
        }
        switch try owners.replicaOwner(request.replica) {
        case nil: try owners.putReplicaOwner(pusher.id, of: request.replica)
        case pusher.id?: break
        case _?: throw MsglogError.namedToken(.replicaOwned(replica: request.replica, token: pusher.name))
        }
      }
      let done = try session.perform(
        pushed: changes, by: request.replica, secret: request.secret, recordingIn: sync, as: pusher)
      return PushAnswer(head: session.nextSeq - 1, outcomes: done.outcomes, resent: done.resent)
    }
    // What this push appended: its applied outcomes past the ones resent.
    for case .applied in answer.outcomes.dropFirst(answer.resent) { appended += 1 }
    return answer
  }

  /// What sync's bookkeeping holds here (`streams`, `/metrics`).
  package func syncBookkeeping() throws -> SyncBookkeeping {
    try readingBase { reader in
      guard let sync = reader as? any SyncStateReader else { return SyncBookkeeping() }
      return try sync.syncBookkeeping()
    }
  }

  /// Calls `body` with the records a pull asks for, in order — at most its
  /// `limit`, and no more than `SyncProtocol.pageBytes` past the first —
  /// once the record at its `after` is found to be the replica's (its
  /// `check`); returns the head.
  package func records(_ request: PullRequest, _ body: (UInt64, UnsafeRawBufferPointer) throws -> Void) throws
    -> UInt64
  {
    let (seq, check, limit) = (request.after, request.check, request.limit)
    return try remoteRead { sync in
      try checkRemote(sync, log: request.log)
      let head = try sync.headSeq()
      guard seq <= head else {
        throw MsglogError.anotherLog(
          remote: location,
          reason: "it is at seq \(head), behind the replica (at seq \(seq)): restored from an older copy?")
      }
      // A replica behind the horizon starts again from the bases (`bases`).
      let horizon = try sync.horizon()
      try horizon.check(listAfter: seq)
      // At the seq before the horizon the record may be one the trim
      // dropped (a replica there has not learned the trim yet): no check.
      if seq > 0, seq >= horizon.seq, let check {
        let found = try sync.withRecord(at: seq) { EventRecord.headCheck($0) }
        guard found == check else {
          throw MsglogError.anotherLog(remote: location, reason: "its event at seq \(seq) is not the replica's")
        }
      }
      var sent = 0
      var bytes = 0
      if limit > 0 && seq < head {
        try sync.forEachRecord(from: seq + 1) { recordSeq, record in
          try body(recordSeq, record)
          sent += 1
          bytes += record.count
          return sent < limit && bytes < SyncProtocol.pageBytes && recordSeq < head
        }
      }
      return head
    }
  }

  /// The log's bases, for a replica that starts from them (a clone, or a
  /// replica behind the horizon): none for a log never trimmed.
  package func syncBases(log: ItemID) throws -> [ImportedBase] {
    try remoteRead { sync in try checkRemote(sync, log: log) }
    return try read { try $0.exportedBases() }
  }

  /// A read of the log's own tables (never a local view: a replica is no remote).
  private func remoteRead<R>(_ body: (any SyncStateReader) throws -> R) throws -> R {
    try readingBase { reader in
      guard let sync = reader as? any SyncStateReader else {
        throw MsglogError.incompatibleRemote(remote: location, reason: "its store keeps no sync state")
      }
      return try body(sync)
    }
  }

  /// Refuses a replica of another log.
  private func checkRemote(_ sync: any SyncStateReader, log: ItemID) throws {
    if let replicas = sync as? any ReplicaStateReader, try replicas.replicaState() != nil {
      throw MsglogError.incompatibleRemote(remote: location, reason: "it is a replica, which syncs with its own remote")
    }
    guard let id = try sync.logID(), id == log else {
      throw MsglogError.anotherLog(remote: location, reason: "its log's id is not the one the replica was cloned from")
    }
  }
}

extension EventLog {
  /// What this log keeps of a replica that pushed to it (tests).
  package func syncProgress(of replica: ItemID) throws -> ReplicaProgress? {
    try readingBase { reader in try (reader as? any SyncStateReader)?.progress(of: replica) }
  }

  /// The outcomes of a replica's changes done here, in change order (tests, `verify`).
  package func syncOutcomes(of replica: ItemID) throws -> [(UInt64, ChangeOutcome)] {
    try readingBase { reader in
      guard let sync = reader as? any SyncStateReader else { return [] }
      var outcomes: [(UInt64, ChangeOutcome)] = []
      try sync.forEachOutcome(by: replica) { change, outcome in
        outcomes.append((change, outcome))
        return true
      }
      return outcomes
    }
  }
}
