import MsglogCore

/// A replica (docs/SYNC.md): reads see its local view, writes pend.
extension EventLog {
  /// Whether the log is a replica: its writes pend until `sync()`.
  ///
  /// Read once and then known (a log never becomes a replica in place, nor
  /// stops being one). False for a database that does not exist yet, and
  /// for one that cannot be read: every other call says why.
  public var isReplica: Bool {
    (try? replicaState()) != nil
  }

  /// The replica's state; nil for a log that is not a replica (or not there yet).
  public func replicaState() throws -> ReplicaState? {
    if replicaKnown.withLock({ $0 }) == false { return nil }
    // Only LMDB (and the in-memory twin) hold replicas: a PostgreSQL log is
    // never one, and a write there must not cost a read to learn so.
    guard store.keepsReplicas else { return nil }
    do {
      return try store.read { reader in try replicaState(in: reader) }
    } catch MsglogError.noDatabase {
      return nil
    } catch {
      throw MsglogError(anyStoreFailure: error)
    }
  }

  /// The replica state `reader` holds, caching that there is none.
  func replicaState(in reader: any LogReader) throws -> ReplicaState? {
    guard replicaKnown.withLock({ $0 }) != false, let replicas = reader as? any ReplicaStateReader else {
      return nil
    }
    let state = try replicas.replicaState()
    replicaKnown.withLock { $0 = state != nil }
    return state
  }

  /// A read of the log's own events and tables, never a local view (what
  /// sync reads of a replica, and a remote of itself; what a trim's dry
  /// run plans on, so that a replica refuses it as it refuses the trim).
  func readingBase<R>(_ body: (any LogReader) throws -> R) throws(MsglogError) -> R {
    do {
      return try store.read { reader in try body(reader) }
    } catch {
      throw MsglogError(anyStoreFailure: error)
    }
  }

  /// Runs `body` on a snapshot of `reader`: of its local view in a replica.
  func withSnapshot<R>(of reader: any LogReader, _ body: (borrowing LogSnapshot) throws -> R) throws -> R {
    guard let state = try replicaState(in: reader),
      let replicas = reader as? any ReplicaStateReader
    else { return try body(LogSnapshot(reader: reader)) }
    let view = try LocalView(over: replicas, state: state, now: configuration.clock())
    return try body(LogSnapshot(localView: view, base: reader))
  }

  /// A write on a replica: validated against the local view, kept as
  /// pending changes, durably, in one transaction (all or none).
  func performPending(_ batch: WriteBatch, lineNumbers: [Int]?) throws -> [Outcome?] {
    try writing { writer in
      guard let replicas = writer as? any ReplicaStateWriter, var state = try replicas.replicaState() else {
        throw MsglogError.notAReplica(location: location)
      }
      let now = configuration.clock()
      let view = try LocalView(over: replicas, state: state, now: now)
      let made = try view.make(
        batch, first: state.nextChange, made: now,
        lineNumbers: lineNumbers)
      for case let (_, change)? in made {
        try replicas.putPendingChange(change.number, json: change.json)
        state.nextChange = change.number + 1
      }
      try replicas.putReplicaState(state)
      // The view as this write leaves it, so that reads need not perform
      // the pending changes again (docs/SYNC.md, "The local view").
      try replicas.putSavedLocalView(view.saved(nextChange: state.nextChange)?.encoded())
      return made.map { $0.map { Self.pendingOutcome($0.outcome, after: view.baseHead) } }
    }
  }

  /// A pending change's outcome as the door shows it: its event's seq is
  /// 0, not the local view's (a seq the log will give another event), and
  /// an undo of another pending change names no seq.
  private static func pendingOutcome(_ outcome: Outcome, after baseHead: UInt64) -> Outcome {
    var outcome = outcome
    outcome.event.seq = 0
    if let undoes = outcome.event.undoes, undoes > baseHead { outcome.event.undoes = nil }
    return outcome
  }
}
