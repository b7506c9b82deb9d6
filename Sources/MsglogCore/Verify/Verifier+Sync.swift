/// `verify` of sync's tables (docs/SYNC.md): a remote's record of what it
/// did with each replica's changes against the events' origins, and a
/// replica's own pending changes and outcomes.
extension Verifier.Check {
  mutating func syncState() {
    for (replica, changes) in origins {
      for (change, seqs) in changes where seqs.count > 1 {
        problem(
          "seqs \(seqs.map(String.init).joined(separator: ", ")): change \(change) of replica \(replica.text) was applied more than once"
        )
      }
    }
    if let sync = reader as? any SyncStateReader {
      do { try remoteState(sync) } catch { failed(error, "table replicas: cannot be read: \(error)") }
    }
    if let replicas = reader as? any ReplicaStateReader {
      do { try replicaState(replicas) } catch { failed(error, "table pending: cannot be read: \(error)") }
    }
  }

  /// Each replica's progress D: its changes from the first whose outcome
  /// is kept whatever it was (K) to D have one outcome each, those before K
  /// only the applied ones (the others the replica settled, and the remote
  /// forgot); the applied ones are the very events that carry their origin,
  /// and no event of its origin lacks one.
  private mutating func remoteState(_ sync: any SyncStateReader) throws {
    var progress: [(ItemID, ReplicaProgress)] = []
    try sync.forEachReplica { replica, kept in
      progress.append((replica, kept))
      return true
    }
    for (replica, kept) in progress {
      var expected = kept.keptFrom
      var applied: [UInt64: UInt64] = [:]
      var problems: [String] = []
      try sync.forEachOutcome(by: replica) { change, outcome in
        if case .applied(let seq, _) = outcome { applied[change] = seq }
        guard change >= kept.keptFrom else {
          if applied[change] == nil {
            problems.append(
              "table sync-outcomes: replica \(replica.text) keeps an outcome of change \(change) that appended nothing, before change \(kept.keptFrom)"
            )
          }
          return true
        }
        if change != expected {
          problems.append(
            "table sync-outcomes: replica \(replica.text) has no outcome for change \(expected)…\(change - 1)")
        }
        expected = change + 1
        return true
      }
      for text in problems { problem(text) }
      if expected - 1 != kept.done {
        problem(
          "table replicas: replica \(replica.text) has done \(kept.done) changes, its outcomes say \(expected - 1)")
      }
      let events = origins[replica] ?? [:]
      // An outcome keeps its seq after a trim took the event (a replica
      // retrying the change learns it, and the change is not applied twice).
      for (change, seq) in applied.sorted(by: { $0.key < $1.key })
      where seq >= state.horizon && events[change]?.first != seq {
        problem(
          "table sync-outcomes: change \(change) of replica \(replica.text) says seq \(seq), whose event is not it")
      }
      for (change, seqs) in events.sorted(by: { $0.key < $1.key }) where applied[change] == nil {
        problem(
          "seq \(seqs[0]): the event of change \(change) of replica \(replica.text) has no applied outcome in sync-outcomes"
        )
      }
    }
  }

  /// A replica's pending changes decode, are numbered below its next
  /// number and in order; the applied outcomes it learned of its own
  /// changes that it holds are the events with their origin.
  private mutating func replicaState(_ replicas: any ReplicaStateReader) throws {
    guard let state = try replicas.replicaState() else { return }
    do {
      let pending = try LocalView.pendingChanges(in: replicas)
      if let last = pending.last, last.number >= state.nextChange {
        problem("table pending: change \(last.number) is numbered past the next one (\(state.nextChange))")
      }
      for change in pending {
        if case .applied(let seq, _)? = try replicas.learnedOutcome(ofChange: change.number), seq <= report.events {
          problem(
            "table pending: change \(change.number) is still pending though the replica holds its event (seq \(seq))")
        }
      }
    } catch let error as MsglogError {
      failed(error, "\(error)")
    }
    keptView(replicas, state: state)
    for (change, seqs) in origins[state.replica] ?? [:] {
      switch try replicas.learnedOutcome(ofChange: change) {
      case nil: continue
      case .applied(let seq, _)? where seq == seqs[0]: continue
      default: problem("table learned: change \(change) of this replica is not the event at seq \(seqs[0]) it became")
      }
    }
  }

  /// The local view a write kept decodes and, while it is the replica's
  /// (its stamp matches), is the view computed afresh, byte for byte.
  private mutating func keptView(_ replicas: any ReplicaStateReader, state: ReplicaState) {
    do {
      guard let row = try replicas.savedLocalView() else { return }
      let kept = try row.withUnsafeBytes { bytes throws(DerivedDamage) in try SavedLocalView(decoding: bytes) }
      guard kept.stamp == (try SavedLocalView.Stamp(of: replicas, state: state)) else { return }
      // A change is dated when it was made: no clock is read computing a view.
      let fresh = try LocalView.computed(over: replicas, state: state, now: Timestamp(milliseconds: 0))
      guard fresh.saved(nextChange: state.nextChange)?.encoded() == row else {
        problem("meta local-view: the kept local view is not the one its replica's pending changes make")
        return
      }
    } catch let damage as DerivedDamage {
      problem("\(damage)")
    } catch {
      failed(error, "the kept local view: \(error)")
    }
  }
}
