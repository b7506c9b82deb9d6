/// A replica's local view (docs/SYNC.md): its events, with its pending
/// changes performed on top in the order they were made — by the ledger
/// itself, with the placement the remote will use — in an overlay that is
/// never written. What `list`, `streams` and a write on a replica see.
///
/// A pending change that does not apply here now (its item was removed by
/// an event pulled since, say) is left out and noted: the remote will most
/// likely refuse it too, and says so when it is pushed.
///
/// - Warning: valid only inside the store transaction it reads.
package final class LocalView {
  package let state: ReplicaState
  package let overlay: OverlayWriter
  let session: LedgerSession
  let base: any ReplicaStateReader
  /// The pending changes, in order; nil until first asked for in a view
  /// read from what the last write kept (`SavedLocalView`).
  private var decodedChanges: [ReplicaChange]?
  /// How many changes pend, decoded or not.
  private var changeCount: Int
  /// The local seq each applied pending change's event got, and back.
  package private(set) var seqOfChange: [UInt64: UInt64] = [:]
  package private(set) var changeOfSeq: [UInt64: UInt64] = [:]
  /// Items whose latest change is pending.
  package private(set) var pendingItems: Set<ItemID> = []
  /// Pending changes that do not apply to the local view now, with why.
  package private(set) var notApplying: [UInt64: MsglogError] = [:]

  /// The replica's last event (the local view's own events come after it).
  package var baseHead: UInt64 { overlay.baseHead }

  /// The pending changes, in order.
  package var changes: [ReplicaChange] {
    get throws {
      if let decodedChanges { return decodedChanges }
      let changes = try Self.pendingChanges(in: base)
      decodedChanges = changes
      return changes
    }
  }

  /// The streams with a pending change.
  package var pendingStreams: Set<StreamName> {
    get throws {
      if decodedChanges == nil { return Set(overlay.contents.streamEvents.keys) }
      return Set(try changes.map(\.stream))
    }
  }

  /// The local view: the one the last local write kept when it is still
  /// the replica's (`SavedLocalView`), or computed by performing the
  /// pending changes.
  package convenience init(over base: any ReplicaStateReader, state: ReplicaState, now: Timestamp) throws {
    if let saved = try Self.kept(in: base, state: state) {
      try self.init(over: base, state: state, now: now, restoring: saved)
    } else {
      try self.init(over: base, state: state, now: now, computing: ())
    }
  }

  /// The view the replica keeps, when its stamp says it is of the
  /// replica as it is now; nil when there is none or it is stale. One that
  /// does not decode is computed again too (it is derived: `verify` names
  /// it, the next write replaces it), so a read never fails for it.
  private static func kept(in base: any ReplicaStateReader, state: ReplicaState) throws -> SavedLocalView? {
    guard let row = try base.savedLocalView(),
      let saved = try? row.withUnsafeBytes({ bytes throws(DerivedDamage) in try SavedLocalView(decoding: bytes) })
    else { return nil }
    return saved.stamp == (try SavedLocalView.Stamp(of: base, state: state)) ? saved : nil
  }

  private init(over base: any ReplicaStateReader, state: ReplicaState, now: Timestamp, restoring saved: SavedLocalView)
    throws
  {
    self.base = base
    self.state = state
    overlay = OverlayWriter(over: base, baseHead: saved.stamp.baseHead, restoring: saved.contents)
    session = try LedgerSession(writer: overlay, now: now, checkpointInterval: .max)
    changeCount = Int(saved.stamp.pendingCount)
    seqOfChange = saved.seqOfChange
    changeOfSeq = Dictionary(uniqueKeysWithValues: saved.seqOfChange.map { ($0.value, $0.key) })
    pendingItems = saved.pendingItems
  }

  /// The view as a replica keeps it, or nil when it cannot be kept: a
  /// change that does not apply, or one that made no event, is computed
  /// again at every read (its reason is the read's to say).
  /// `nextChange` is the replica's next change number after the write.
  package func saved(nextChange: UInt64) -> SavedLocalView? {
    guard notApplying.isEmpty, seqOfChange.count == changeCount else { return nil }
    return SavedLocalView(
      stamp: SavedLocalView.Stamp(baseHead: baseHead, nextChange: nextChange, pendingCount: UInt64(changeCount)),
      contents: overlay.contents, seqOfChange: seqOfChange, pendingItems: pendingItems)
  }

  /// The view computed by performing the pending changes, never the kept one.
  package static func computed(over base: any ReplicaStateReader, state: ReplicaState, now: Timestamp) throws
    -> LocalView
  {
    try LocalView(over: base, state: state, now: now, computing: ())
  }

  private init(over base: any ReplicaStateReader, state: ReplicaState, now: Timestamp, computing: Void) throws {
    self.base = base
    self.state = state
    let changes = try Self.pendingChanges(in: base)
    var skipped: Set<UInt64> = []
    // A refused change whose taking back failed (it had written to the
    // overlay) is left out by building the view again without it.
    while true {
      let overlay = try OverlayWriter(over: base)
      let session = try LedgerSession(writer: overlay, now: now, checkpointInterval: .max)
      var view = Applied()
      var retry = false
      var performed: UInt64 = 0
      for change in changes where !skipped.contains(change.number) {
        // Written out now and then, so that a mark's copy stays small.
        if performed > 0, performed % LedgerSession.changesBetweenFinishes == 0 { try session.finish() }
        performed += 1
        let mark = session.mark()
        do {
          let outcome = try session.perform(change, origin: nil) { earlier in
            try view.seqOfChange[earlier] ?? Self.appliedSeq(of: earlier, in: base)
          }
          if let outcome { view.record(change.number, outcome) }
        } catch let error as MsglogError where error.category != .damaged && error.category != .unavailable {
          view.notApplying[change.number] = error
          if !session.rewind(to: mark) {
            skipped.insert(change.number)
            retry = true
            break
          }
        }
      }
      if retry { continue }
      try session.finish()
      (self.overlay, self.session, self.decodedChanges, changeCount) = (overlay, session, changes, changes.count)
      (seqOfChange, changeOfSeq, pendingItems, notApplying) = (
        view.seqOfChange, view.changeOfSeq, view.pendingItems, view.notApplying
      )
      for number in skipped { notApplying[number] = notApplying[number] ?? .changeDoesNotApply(change: number) }
      return
    }
  }

  /// A replica's pending changes, in order, decoded but not performed.
  package static func pendingChanges(in base: any ReplicaStateReader) throws -> [ReplicaChange] {
    var changes: [ReplicaChange] = []
    try base.forEachPendingChange { number, json in
      let value: JSONValue
      do { value = try JSONParser.parse(json) } catch {
        throw MsglogError.derivedDamage(DerivedDamage(.pending, "change \(number) is not JSON: \(error)"))
      }
      let change: ReplicaChange
      do { change = try ReplicaChange(json: value) } catch {
        throw MsglogError.derivedDamage(DerivedDamage(.pending, "change \(number) does not decode: \(error)"))
      }
      guard change.number == number else {
        throw MsglogError.derivedDamage(
          DerivedDamage(.pending, "the row of change \(number) holds change \(change.number)"))
      }
      changes.append(change)
      return true
    }
    return changes
  }

  private struct Applied {
    var seqOfChange: [UInt64: UInt64] = [:]
    var changeOfSeq: [UInt64: UInt64] = [:]
    var pendingItems: Set<ItemID> = []
    var notApplying: [UInt64: MsglogError] = [:]

    mutating func record(_ number: UInt64, _ outcome: Outcome) {
      seqOfChange[number] = outcome.event.seq
      changeOfSeq[outcome.event.seq] = number
      pendingItems.insert(outcome.event.id)
    }
  }

  /// The seq a change of this replica that is no longer pending became.
  static func appliedSeq(of change: UInt64, in base: any ReplicaStateReader) throws -> UInt64? {
    if case .applied(let seq, _)? = try base.learnedOutcome(ofChange: change) { return seq }
    return nil
  }

  // MARK: - Making changes

  /// Performs a write command on the local view (validated as the log
  /// would validate it there, `expectVersion` and `rebase` against it) and
  /// returns what each request became: its outcome in the local view and
  /// the change to keep pending, numbered from `first`; nil for a request
  /// that changes nothing. All or none: a refusal throws.
  package func make(
    _ batch: WriteBatch, first: UInt64, made: Timestamp, lineNumbers: [Int]? = nil
  ) throws -> [(outcome: Outcome, change: ReplicaChange)?] {
    let requests = batch.requests
    guard !requests.isEmpty else { return [] }
    let basis = try session.rebaseBasis(of: batch, lineNumbers: lineNumbers)
    var results: [(outcome: Outcome, change: ReplicaChange)?] = []
    var number = first
    var shift = 0
    for (i, original) in requests.enumerated() {
      do {
        try make(
          original, at: i, basis: basis, shift: &shift, number: &number, made: made, into: &results)
      } catch let error as MsglogError where lineNumbers != nil {
        throw MsglogError.line(lineNumbers![i], error)
      }
    }
    try session.finish()
    return results
  }

  /// One request of `make`'s.
  private func make(
    _ original: WriteRequest, at i: Int, basis: UInt64?, shift: inout Int, number: inout UInt64, made: Timestamp,
    into results: inout [(outcome: Outcome, change: ReplicaChange)?]
  ) throws {
    var request = original
    guard request.undoes == nil, request.origin == nil else {
      throw MsglogError.invalidInput(
        .write("a replica's change cannot say what it undoes or where it came from; use undo"))
    }
    // Forgetting is done where the log is: the sync that pulls the erase
    // blanks the replica's copy. A pending change would hold the item.
    switch request.command {
    case .erase, .unsign:
      throw MsglogError.invalidInput(.write("a replica cannot erase; erase at its remote, and sync"))
    default: break
    }
    request.time = nil
    let outcome: Outcome?
    if let basis, i == 0 {
      outcome = try session.perform(request, rebasingFrom: basis)
      if let outcome, case .insert(let insert) = request.command, let index = insert.index {
        shift = outcome.index - index
      }
    } else {
      if basis != nil, case .insert(var insert) = request.command, let index = insert.index {
        insert.index = index + shift
        request.command = .insert(insert)
      }
      outcome = try session.perform(request)
    }
    guard var outcome else {
      results.append(nil)
      return
    }
    let change = ReplicaChange(
      number: number, made: made, basis: baseHead, stream: request.stream,
      intent: try intent(of: request, outcome: outcome))
    outcome.pending = number
    outcome.rebased = outcome.rebased || (basis != nil && i > 0)
    seqOfChange[number] = outcome.event.seq
    changeOfSeq[outcome.event.seq] = number
    pendingItems.insert(outcome.event.id)
    decodedChanges?.append(change)
    changeCount += 1
    results.append((outcome, change))
    number += 1
  }

  /// What the user meant by `request`, which gave `outcome` in the local
  /// view: ids for the items it names, and the items before where it put
  /// one (nearest first) for the predecessor rule.
  private func intent(of request: WriteRequest, outcome: Outcome) throws -> ReplicaChange.Intent {
    let event = outcome.event
    func after() throws -> [ItemID] { try session.predecessors(ofIndex: outcome.index, in: event.stream) }
    switch (request.command, event.op) {
    case (.undo(_, let sender), let op):
      // Only an edit names a sender: one given to another undoing is not
      // sent (a remote older than undo's sender refuses the member).
      guard case .edit = op else { return .undo(target(of: event.undoes!), sender: nil) }
      return .undo(target(of: event.undoes!), sender: sender)
    case (.insert(let insert), .insert(let id, _, let text, let sender)):
      if insert.index == nil { return .append(id: id, text: text, sender: sender, seen: outcome.index) }
      return .insert(id: id, text: text, sender: sender, after: try after(), seen: outcome.index)
    case (_, .move(let id, let from, let to)):
      return .move(id: id, after: try after(), from: Int(from), to: Int(to))
    case (_, .remove(let id, _)):
      return .remove(id: id)
    case (_, .edit(let id, let text, let sender, _, _, _)):
      return .edit(id: id, text: text, sender: sender)
    case (.restore(_, let index), .restore(let id, _, _)):
      return .restore(id: id, after: index == nil ? nil : try after(), seen: outcome.index)
    default:
      preconditionFailure("a \(event.opName) event from a request that does not make one")
    }
  }

  /// An undo's target: an event of the replica, or a pending change.
  private func target(of seq: UInt64) -> ReplicaChange.UndoTarget {
    if seq > baseHead, let number = changeOfSeq[seq] { return .change(number) }
    return .event(seq: seq)
  }

  /// Writes what the view's session holds into the overlay, so reads see it.
  package func flush() throws { try session.finish() }
}
