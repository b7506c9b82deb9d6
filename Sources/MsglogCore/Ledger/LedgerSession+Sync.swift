/// Sync (docs/SYNC.md): a replica's change done as its user meant it, and
/// a replica taking in its remote's events.
///
/// One function places a change for the remote doing it and for the
/// replica showing it before it is done (its local view): the two agree
/// whenever the lists they start from do, so nothing moves after a sync
/// when nobody else changed the stream.
extension LedgerSession {
  /// Performs `change` on the stream as it is now, by the predecessor rule
  /// for what it places (`ReplicaChange`); nil when it changes nothing.
  ///
  /// - Parameters:
  ///   - origin: the origin its event gets (a remote doing it, which dates
  ///     it now); nil in a replica's local view, where it is dated when
  ///     the change was made.
  ///   - resolveChange: the seq an earlier change of the same replica became, for
  ///     an undo of it; nil when that change appended nothing.
  package func perform(
    _ change: ReplicaChange, origin: Origin?, resolvingChange resolveChange: (UInt64) throws -> UInt64?
  ) throws -> Outcome? {
    try Limits.checkStreamName(change.stream.text)
    // Before anything is looked up, as for a command: a change past the
    // limits is refused as such even where it would change nothing.
    try Limits.check(change.intent)
    if let origin { try Limits.check(origin, at: now) }
    var state = try takeState(of: change.stream)
    defer { streams[change.stream] = state }
    self.origin = origin
    defer { self.origin = nil }
    // In the local view the event is dated when its user made the change:
    // the list shows the same time at every read, until the remote dates it.
    let time = origin == nil ? change.made : nil
    var outcome: Outcome?
    switch change.intent {
    case .append(let id, let text, let sender, _):
      outcome = try performInsert(
        InsertRequest(text: text, sender: sender, id: id), time: time, undoes: nil, on: &state)
    case .insert(let id, let text, let sender, let after, _):
      let index = place(after: try firstLive(of: after, excluding: nil, in: &state))
      outcome = try performInsert(
        InsertRequest(index: index, text: text, sender: sender, id: id), time: time, undoes: nil, on: &state)
    case .move(let id, let after, _, _):
      let from = try resolve(.id(id), in: &state)
      let to = place(after: try firstLive(of: after, excluding: id, in: &state), moving: from)
      outcome = try performMove(from: from, to: to, id: id, time: time, undoes: nil, on: &state)
    case .remove(let id):
      outcome = try performRemove(.id(id), time: time, undoes: nil, on: &state)
    case .edit(let id, let text, let sender):
      outcome = try performEdit(.id(id), text: text, sender: sender, time: time, undoes: nil, on: &state)
    case .restore(let id, nil, _):
      outcome = try performRestore(.id(id), at: nil, time: time, undoes: nil, on: &state)
    case .restore(let id, let after?, _):
      _ = try resolveRemoved(.id(id), in: &state)
      let index = place(after: try firstLive(of: after, excluding: id, in: &state))
      outcome = try performRestore(.id(id), at: index, time: time, undoes: nil, on: &state)
    case .undo(.event(let seq), let sender):
      outcome = try performUndo(seq, sender: sender, time: time, on: &state)
    case .undo(.change(let earlier), let sender):
      guard let seq = try resolveChange(earlier) else { throw MsglogError.changeAppendedNothing(change: earlier) }
      outcome = try performUndo(seq, sender: sender, time: time, on: &state)
    }
    if change.places, let seen = change.seenIndex, let index = outcome?.index, index != seen {
      outcome?.rebased = true
    }
    return outcome
  }

  /// The item a placed change follows: the first of `after` (the items
  /// before its place in the list its user saw, nearest first) that is
  /// live in the stream now; when none is and the list was cut at the
  /// limit, the one its last item follows by restore's rule. Nil: at the
  /// front.
  func firstLive(of after: [ItemID], excluding moved: ItemID?, in state: inout StreamState) throws
    -> (id: ItemID, index: Int)?
  {
    for id in after where id != moved {
      guard let entry = try idEntry(id), entry.removeSeq == 0, try lives(entry, in: state.head.stream) else { continue }
      return (id, try index(of: id, entry: entry, in: &state))
    }
    guard after.count >= ReplicaChange.predecessorLimit, let last = after.last, let entry = try idEntry(last),
      entry.removeSeq != 0, try lives(entry, in: state.head.stream)
    else { return nil }
    let anchor = try predecessor(ofRemove: entry.removeSeq, in: &state)
    return anchor?.id == moved ? nil : anchor
  }

  /// The ids before `index` of the stream as this session has it, nearest
  /// first, at most `ReplicaChange.predecessorLimit`: a placed change's
  /// `after`, read off the list its user saw.
  package func predecessors(ofIndex index: Int, in stream: StreamName) throws -> [ItemID] {
    let state = try takeState(of: stream)
    defer { streams[stream] = state }
    var ids: [ItemID] = []
    var position = index - 1
    while position >= 0 && ids.count < ReplicaChange.predecessorLimit {
      ids.append(try state.tree.element(at: position).id)
      position -= 1
    }
    return ids
  }

  /// A replica takes in `event`, its remote's next one: performed again,
  /// it must give that very event (its seq, indices, time, origin), or the
  /// replica is not a copy of that log. Its record is written in `layout`,
  /// the remote record's own, so that the replica holds the remote's bytes.
  package func adopt(_ event: Event, layout: EventRecord.Layout) throws {
    guard event.seq == nextSeq else {
      throw MsglogError.corruptedLog("the remote sent seq \(event.seq) where this log's next is \(nextSeq)")
    }
    self.layout = layout
    defer { self.layout = nil }
    let produced = try perform(WriteRequest(recreating: event))?.event
    guard produced == event else {
      throw MsglogError.eventDoesNotFit(
        seq: event.seq, reason: "the remote's event does not fit this log (is it the log it was cloned from?)")
    }
  }
}

extension LedgerSession {
  /// A remote doing a replica's changes, in order, each at most once: a
  /// change already done gets the outcome it got then; the next one is
  /// performed and its outcome recorded with it, in this transaction —
  /// applied (its event carries its origin), unchanged, or refused, which
  /// takes back whatever it did and refuses only itself. A change past the
  /// next one refuses the whole push (`changeOutOfOrder`): a replica sends
  /// its pending changes from the first, so a gap means it lost track.
  ///
  /// First the replica proves it is itself: its secret must be the one
  /// whose hash the remote keeps (`replicaSecretRefused` otherwise, before
  /// anything is read or written); the first push carrying one, for a
  /// replica the remote holds no hash of, claims the id. Then what the
  /// replica settled before the push's first change is forgotten, unless
  /// it was applied (`ReplicaProgress`).
  ///
  /// - Parameter sync: the transaction's sync tables (the session's writer).
  /// - Returns: an outcome per change, and how many of them were resent
  ///   (done before: their stored outcomes).
  package func perform(
    pushed changes: [ReplicaChange], by replica: ItemID, secret: ReplicaSecret?,
    recordingIn sync: any SyncStateWriter, as pusher: NamedToken? = nil
  ) throws -> (outcomes: [ChangeOutcome], resent: Int) {
    if replica == ItemID.nil { throw MsglogError.invalidInput(.nilReplica) }
    let stored = try sync.progress(of: replica)
    var progress = stored ?? ReplicaProgress()
    switch (progress.secret, secret) {
    case (let kept?, let given?):
      guard kept.matches(given.digest) else { throw MsglogError.replicaSecretRefused(replica: replica, given: true) }
    case (nil, let given?):
      // A new replica, or one whose pushes began before replicas had secrets.
      progress.secret = given.digest
    case (_, nil):
      throw MsglogError.replicaSecretRefused(replica: replica, given: false)
    }
    guard !changes.isEmpty else { return ([], 0) }
    let before = progress
    if let first = changes.first?.number, first > progress.keptFrom, first <= progress.done + 1 {
      writesSent += 1
      try sync.forgetUnappliedOutcomes(by: replica, in: progress.keptFrom..<first)
      progress.keptFrom = first
    }
    var done = progress.done
    var outcomes: [ChangeOutcome] = []
    var resent = 0
    outcomes.reserveCapacity(changes.count)
    for change in changes {
      if change.number <= done {
        guard let outcome = try sync.outcome(ofChange: change.number, by: replica) else {
          if progress.mayHaveForgotten(change.number) {
            throw MsglogError.changeForgotten(change: change.number, keptFrom: progress.keptFrom)
          }
          throw MsglogError.derivedDamage(
            DerivedDamage(
              table: "sync-outcomes", "change \(change.number) of replica \(replica.text) is done but has no outcome"))
        }
        try checkResent(change, outcome: outcome, by: replica)
        outcomes.append(outcome)
        resent += 1
        continue
      }
      guard change.number == done + 1 else { throw MsglogError.changeOutOfOrder(change: change.number, done: done) }
      let origin = Origin(replica: replica, change: change.number, made: change.made)
      // A mark keeps the session's state as it is; what is changed after it
      // copies that state whole: written out now and then, it stays small.
      if done > before.done, (done - before.done) % Self.changesBetweenFinishes == 0 { try finish() }
      let mark = self.mark()
      let outcome: ChangeOutcome
      do {
        // A named token's change: refused as a change where it may not
        // write, and sent as the token's name.
        var change = change
        if let pusher {
          guard pusher.scopes.allows(.write, on: change.stream) else {
            throw MsglogError.namedToken(.mayNot(token: pusher.name, right: .write, stream: change.stream))
          }
          change.intent = change.intent.sent(as: pusher.name)
        }
        let appended = try perform(change, origin: origin) { earlier in
          switch try sync.outcome(ofChange: earlier, by: replica) {
          case .applied(let seq, _)?: return seq
          case .unchanged?, .refused?: return nil
          // Only what appended nothing is forgotten.
          case nil where progress.mayHaveForgotten(earlier): return nil
          case nil: throw MsglogError.changeOutOfOrder(change: earlier, done: done)
          }
        }
        outcome = appended.map { .applied(seq: $0.event.seq, rebased: $0.rebased) } ?? .unchanged
      } catch let error as MsglogError {
        // Refused for good only for a reason with a code (`ChangeRefusal`):
        // anything else (the store failing, damage) fails the push whole.
        // Told as the pusher may see it: no stream it may not read named.
        let told = pusher.map { pusher in error.hidingStreams { pusher.scopes.allows(.read, on: $0) } } ?? error
        guard let refusal = ChangeRefusal(told), rewind(to: mark) else { throw error }
        outcome = .refused(refusal)
      }
      writesSent += 1
      try sync.putOutcome(outcome, ofChange: change.number, by: replica)
      outcomes.append(outcome)
      done = change.number
    }
    progress.done = done
    // A new replica, or a secret just claimed, or progress made.
    if stored?.secret == nil || done != before.done || progress.keptFrom != before.keptFrom {
      writesSent += 1
      try sync.putProgress(progress, of: replica)
    }
    return (outcomes, resent)
  }

  /// A change sent again must be the one done under its number. A copy of
  /// the replica (restored from a backup, or copied) numbers its changes
  /// again from where the copy was: its change would get the first one's
  /// outcome and be lost without a word, or stall its sync for good. Told
  /// by when the change was made, which the event's origin keeps; an
  /// outcome that appended nothing keeps no event, and is not told. (An
  /// event that cannot be read is `verify`'s to report, not the push's.)
  private func checkResent(_ change: ReplicaChange, outcome: ChangeOutcome, by replica: ItemID) throws {
    guard case .applied(let seq, _) = outcome, let origin = (try? writer.event(at: seq))??.origin,
      origin.replica == replica, origin.change == change.number
    else { return }
    guard origin.made == change.made else { throw MsglogError.changeNumberReused(change: change.number, seq: seq) }
  }

  /// How many changes a session performs, each after a mark, between two
  /// `finish()`es: a mark copies nothing, but the first change after it
  /// copies the session's state (copy on write), so a run of marked
  /// changes costs the square of that state's size unless it is written
  /// out now and then (a replica's list with 1,000 pending: 6.7× without).
  package static let changesBetweenFinishes: UInt64 = 32
}
