import MsglogLMDB

/// A replica's side of sync (docs/SYNC.md): push the pending changes in
/// order, then pull every event the replica lacks, until nothing is pending
/// and the replica is at the remote's head. Each answer is kept in one
/// transaction of the replica's own, so a sync cut anywhere loses nothing
/// and the next one goes on.
extension EventLog {
  /// What a sync did.
  public struct SyncReport: Equatable, Sendable {
    /// The changes now done: applied, changing nothing, or refused.
    public var pushed = 0
    /// The placed changes (append, insert, move) the remote put elsewhere
    /// than where their user saw them.
    public var rebased = 0
    /// The changes refused, with why.
    public var refused: [RefusedChange] = []
    /// The events pulled, this replica's own applied changes among them.
    public var pulled = 0
    /// The replica's head after it.
    public var seq: UInt64 = 0

    public init() {}
  }

  /// A pending change the remote refused.
  public struct RefusedChange: Equatable, Sendable {
    /// Its number on the replica.
    public var change: UInt64
    public var op: String
    public var stream: StreamName
    /// The remote's reason, in the library's words.
    public var error: String

    public init(change: UInt64, op: String, stream: StreamName, error: String) {
      self.change = change
      self.op = op
      self.stream = stream
      self.error = error
    }
  }

  /// The changes a push carries at most, and their bytes (past one change).
  package static let pushBatchChanges = 256
  package static let pushBatchBytes = 768 * 1024

  /// Syncs with `remote` (see the extension's summary).
  package func sync(with remote: any SyncRemote) throws -> SyncReport {
    guard let state = try replicaState() else { throw MsglogError.notAReplica(location: location) }
    let lock = try lockForSync()
    defer { withExtendedLifetime(lock) {} }
    return try syncRound(with: remote, state: state)
  }

  /// One sync, under the lock the caller holds.
  func syncRound(with remote: any SyncRemote, state: ReplicaState) throws -> SyncReport {
    let state = try givingSecret(state)
    let hello = try remote.hello()
    try Self.check(hello, of: remote)
    guard hello.log == state.log else {
      throw MsglogError.anotherLog(
        remote: remote.shown, reason: "its log's id is not the one this replica was cloned from")
    }
    var report = SyncReport()
    // Before anything is pushed: is the remote the log this replica copies,
    // at or past its head? (A pull of nothing checks the record there.)
    _ = try remote.pull(after: try headSeq(), check: try headChecksum(), log: state.log, limit: 0)
    while true {
      try push(to: remote, state: state, into: &report)
      try pull(from: remote, state: state, into: &report)
      guard try pendingCount() > 0 else { break }
    }
    report.seq = try headSeq()
    return report
  }

  /// The replica's sync lock; throws when another sync holds it.
  func lockForSync() throws -> SyncLock? {
    guard let lmdb = store as? LMDBStore else { return nil }
    guard let lock = try lmdb.lockForSync() else { throw MsglogError.syncRunning(location: location) }
    return lock
  }

  /// Refuses a remote whose protocol or record format this msglog does not know.
  static func check(_ hello: RemoteHello, of remote: any SyncRemote) throws {
    if hello.protocolVersion > syncProtocolVersion {
      throw MsglogError.incompatibleRemote(
        remote: remote.shown,
        reason: "it speaks sync protocol \(hello.protocolVersion), this msglog \(syncProtocolVersion): upgrade msglog")
    }
    if hello.recordFormat > Int(EventRecord.formatVersion3) {
      throw MsglogError.incompatibleRemote(
        remote: remote.shown,
        reason: "its log holds records of format \(hello.recordFormat), newer than this msglog's: upgrade msglog")
    }
  }

  /// The CRC-32C of the replica's last record (its last 4 bytes); nil for an empty log.
  func headChecksum() throws -> UInt32? {
    try readingBase { reader in
      let head = try reader.headSeq()
      guard head > 0 else { return nil }
      return try reader.withRecord(at: head) { $0.loadBigEndian(fromByteOffset: $0.count - 4, as: UInt32.self) }
    }
  }

  /// The pending changes, in order.
  package func pendingChanges() throws -> [ReplicaChange] {
    try readingBase { reader in
      guard let replicas = reader as? any ReplicaStateReader else { return [] }
      return try LocalView.pendingChanges(in: replicas)
    }
  }

  func pendingCount() throws -> Int { try pendingChanges().count }

  // MARK: - Pushing

  private func push(to remote: any SyncRemote, state: ReplicaState, into report: inout SyncReport) throws {
    let pending = try pendingChanges()
    var start = 0
    while start < pending.count {
      var end = start
      var bytes = 0
      while end < pending.count && end - start < Self.pushBatchChanges && (end == start || bytes < Self.pushBatchBytes) {
        bytes += pending[end].json.count
        end += 1
      }
      let batch = Array(pending[start..<end])
      precondition(state.secret != nil, "syncRound gives a replica its secret before it pushes")
      let answer = try remote.push(batch, replica: state.replica, secret: state.secret!, log: state.log)
      guard answer.outcomes.count == batch.count else {
        throw MsglogError.incompatibleRemote(
          remote: remote.shown, reason: "it answered \(answer.outcomes.count) outcomes for \(batch.count) changes")
      }
      try learn(zip(batch, answer.outcomes).map { ($0, $1) }, remoteHead: answer.head, into: &report)
      start = end
    }
  }

  /// Keeps what the remote did with each change, in one transaction: a
  /// refused change goes to the refusals, a change that is done and whose
  /// event the replica holds (or that appended nothing) stops pending.
  private func learn(
    _ outcomes: [(ReplicaChange, ChangeOutcome)], remoteHead: UInt64, into report: inout SyncReport
  ) throws {
    let learned: [RefusedChange] = try writing { writer in
      guard let replicas = writer as? any ReplicaStateWriter, var state = try replicas.replicaState() else {
        throw MsglogError.notAReplica(location: location)
      }
      let head = try writer.headSeq()
      var refused: [RefusedChange] = []
      for (change, outcome) in outcomes {
        let known = try replicas.learnedOutcome(ofChange: change.number)
        if known == nil {
          try replicas.putLearnedOutcome(outcome, ofChange: change.number)
          report.pushed += 1
          if case .applied(_, true) = outcome { report.rebased += 1 }
        }
        switch outcome {
        case .refused(let error):
          let refusal = RefusedChange(change: change.number, op: change.opName, stream: change.stream, error: error)
          if known == nil {
            try replicas.putRefused(change.number, json: Self.json(of: refusal))
            refused.append(refusal)
          }
          try replicas.deletePendingChange(change.number)
        case .unchanged:
          try replicas.deletePendingChange(change.number)
        case .applied(let seq, _):
          if seq <= head { try replicas.deletePendingChange(change.number) }
        }
      }
      state.remoteHead = max(state.remoteHead, remoteHead)
      try replicas.putReplicaState(state)
      return refused
    }
    report.refused += learned
  }

  /// A refusal as the replica keeps it: `{"pending","op","stream","error"}`.
  static func json(of refusal: RefusedChange) -> [UInt8] {
    var json = JSONWriter()
    json.object { json in
      json.member("pending", refusal.change)
      json.member("op", refusal.op)
      json.member("stream", refusal.stream)
      json.member("error", refusal.error)
    }
    return json.take()
  }

  // MARK: - Pulling

  func pull(from remote: any SyncRemote, state: ReplicaState, into report: inout SyncReport) throws {
    while true {
      let head = try headSeq()
      let page = try remote.pull(
        after: head, check: try headChecksum(), log: state.log, limit: Self.pullPageRecords)
      if page.records.isEmpty {
        try noteRemoteHead(page.head)
        guard head < page.head else { return }
        throw MsglogError.incompatibleRemote(remote: remote.shown, reason: "it sent no events though it has more")
      }
      report.pulled += try adopt(page, from: remote, into: &report)
    }
  }

  /// Takes in a page of the remote's records, in one transaction with what
  /// it tells of this replica's changes; returns the number taken.
  private func adopt(_ page: RecordPage, from remote: any SyncRemote, into report: inout SyncReport) throws -> Int {
    try writing { writer in
      guard let replicas = writer as? any ReplicaStateWriter, var state = try replicas.replicaState() else {
        throw MsglogError.notAReplica(location: location)
      }
      let session = try LedgerSession(
        writer: writer, now: configuration.clock(), checkpointInterval: UInt64(configuration.checkpointInterval))
      var pending: [UInt64: ReplicaChange]? = nil
      for record in page.records {
        let event: Event
        do { event = try EventRecord.decode(record) } catch {
          throw MsglogError.incompatibleRemote(remote: remote.shown, reason: "it sent a damaged record: \(error)")
        }
        guard EventRecord.encode(event) == record else {
          throw MsglogError.incompatibleRemote(
            remote: remote.shown, reason: "its record at seq \(event.seq) is not in the form this msglog writes")
        }
        do { try session.adopt(event) } catch let error as MsglogError where Self.isTheRecordsFault(error) {
          throw MsglogError.unacceptableRecord(remote: remote.shown, seq: event.seq, reason: error)
        }
        guard let origin = event.origin, origin.replica == state.replica else { continue }
        // This replica's own change, done: learned now if its answer was lost.
        if try replicas.learnedOutcome(ofChange: origin.change) == nil {
          if pending == nil { pending = try pendingByNumber(replicas) }
          let seen = pending?[origin.change]?.seenIndex
          let rebased = pending?[origin.change]?.places == true && seen != nil && seen != Self.index(of: event)
          try replicas.putLearnedOutcome(.applied(seq: event.seq, rebased: rebased), ofChange: origin.change)
          report.pushed += 1
          if rebased { report.rebased += 1 }
        }
        try replicas.deletePendingChange(origin.change)
      }
      try session.finish()
      state.remoteHead = max(state.remoteHead, page.head)
      try replicas.putReplicaState(state)
      return page.records.count
    }
  }

  private func pendingByNumber(_ replicas: any ReplicaStateReader) throws -> [UInt64: ReplicaChange] {
    Dictionary(uniqueKeysWithValues: try LocalView.pendingChanges(in: replicas).map { ($0.number, $0) })
  }

  /// Where an event put its item (the index an outcome reports).
  static func index(of event: Event) -> Int {
    switch event.op {
    case .insert(_, let index, _, _), .remove(_, let index), .restore(_, let index, _),
      .edit(_, _, _, let index, _, _):
      return Int(index)
    case .move(_, _, let to): return Int(to)
    }
  }

  private func noteRemoteHead(_ head: UInt64) throws {
    try writing { writer in
      guard let replicas = writer as? any ReplicaStateWriter, var state = try replicas.replicaState() else { return }
      guard state.remoteHead != head else { return }
      state.remoteHead = head
      try replicas.putReplicaState(state)
    }
  }
}
