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
    /// The remote's horizon, when the replica was behind it and so started
    /// again from the remote's bases (`restartRound`: its pending changes
    /// kept, and its id unless the remote lost track of it or nothing was
    /// pending); nil otherwise.
    public var resetAtHorizon: UInt64? = nil
    /// A purge of the replica's own files ran (an LMDB replica's) and
    /// scrubbed this many bytes: one was owed, by this sync's pull (an
    /// erase, an unsign, a trim learned, a start again) or by an earlier
    /// one that could not pay it. Nil when none was owed.
    public var scrubbed: UInt64? = nil
    /// The purge owed could not finish: an older read still held the
    /// pages (`purgeHeldByReader`: another process's snapshot, or one of
    /// this process's own), or it failed. The sync is done all the same;
    /// the purge stays owed, for the next sync or `purge`.
    public var unpurged: MsglogError? = nil

    public init() {}
  }

  /// A pending change the remote refused.
  public struct RefusedChange: Equatable, Sendable {
    /// Its number on the replica.
    public var change: UInt64
    public var op: String
    public var stream: StreamName
    /// Why: a code with its data to switch on (`.error(.itemRemoved(…))`).
    public var reason: ChangeRefusal

    /// The reason in the library's words.
    public var error: String { reason.description }

    public init(change: UInt64, op: String, stream: StreamName, reason: ChangeRefusal) {
      self.change = change
      self.op = op
      self.stream = stream
      self.reason = reason
    }

    /// A refusal known by its words only.
    public init(change: UInt64, op: String, stream: StreamName, error: String) {
      self.init(change: change, op: op, stream: stream, reason: .unknown(code: nil, words: error))
    }
  }

  /// Syncs with `remote` (see the extension's summary); with `movingTo`,
  /// keeps that as the replica's remote once it is found to hold its log.
  package func sync(with remote: any SyncRemote, movingTo location: String? = nil) throws -> SyncReport {
    guard let state = try replicaState() else { throw MsglogError.notAReplica(location: self.location) }
    let lock = try lockForSync()
    defer { withExtendedLifetime(lock) {} }
    remote.startRun()
    return try owingPurge { try syncRound(with: remote, state: state, movingTo: location) }
  }

  /// Set while a round holds claims no pull has borne out yet — changes
  /// the remote says it applied that are still pending here — so that
  /// `reset`, which numbers pending changes again under a new id, knows
  /// that a failure then must not lead to one (they would be done twice).
  final class ClaimsInFlight {
    var any = false
  }

  /// One sync, under the lock the caller holds.
  func syncRound(
    with remote: any SyncRemote, state: ReplicaState, movingTo location: String? = nil,
    inFlight: ClaimsInFlight? = nil
  ) throws -> SyncReport {
    let state = try givingSecret(state)
    let hello = try remote.hello()
    try Self.check(hello, of: remote)
    guard hello.log == state.log else {
      throw MsglogError.anotherLog(
        remote: remote.shown,
        reason: "it keeps the log \(hello.log?.text ?? "with no id"), the replica was cloned from \(state.log.text)")
    }
    // Behind a trimmed remote's horizon, what the replica lacks is gone
    // there: it starts again from the bases, its pending changes kept.
    if try headSeq() + 1 < hello.horizon {
      var report = try restartRound(with: remote, hello: hello, state: state, movingTo: location, inFlight: inFlight)
      report.resetAtHorizon = hello.horizon
      return report
    }
    var report = SyncReport()
    // Before anything is pushed: is the remote the log this replica copies,
    // at or past its head? (A pull of nothing checks the record there.)
    let held = try headRecord()
    // A replica that stands on bases (no record at its head) is borne out
    // only by a remote whose history begins right after them too
    // (`checkBases`): one that holds records there cannot be checked
    // against lists, and pulling after them would build on bases that may
    // not be its own (a lying remote's, say), for good.
    let head = try headSeq()
    if held == nil, head > 0, hello.horizon <= head {
      throw MsglogError.anotherLog(
        remote: remote.shown,
        reason:
          "its history goes on before seq \(head + 1), where this replica's lists are bases, and those "
          + "cannot be checked against it: 'msglog sync --reset' starts the replica again from it")
    }
    _ = try remote.pull(
      PullRequest(
        log: state.log, after: head, check: held?.withUnsafeBytes(EventRecord.headCheck), limit: 0),
      holding: held)
    if hello.horizon > 1, head + 1 == hello.horizon {
      try checkBases(of: remote, log: state.log, horizon: hello.horizon)
    }
    if let location { try keepRemote(location) }
    // A push the remote refuses whole (`pushRefused`), nothing of it
    // done: what the remote holds is pulled all the same — an erase there
    // must reach this replica, which otherwise would hold the text for as
    // long as it has a change pending — and the sync then fails with the
    // refusal, the changes still pending. So too a push refused as lost
    // track: the pull settles what the remote did of the requests before
    // it (a push goes 256 changes to a request) and of this replica's
    // changes a copy of it pushed (the same change, made at the same
    // time), so that `sync --reset` numbers again only what is left.
    var refusedPush: MsglogError? = nil
    while refusedPush == nil {
      var claims: [UInt64: Claim] = [:]
      do {
        try push(to: remote, state: state, into: &report, claims: &claims, inFlight: inFlight)
      } catch let error as MsglogError {
        switch error {
        case .pushRefused: refusedPush = error
        case _ where error.isLostTrack: refusedPush = error
        default: throw error
        }
      }
      try pull(from: remote, state: state, horizon: hello.horizon, into: &report)
      try check(claims, of: remote, state: state)
      inFlight?.any = false
      guard try pendingCount() > 0 else { break }
    }
    try learnTrim(before: hello.horizon)
    if let refusedPush { throw refusedPush }
    report.seq = try headSeq()
    return report
  }

  /// Runs a sync, then pays the purge the replica owes.
  ///
  /// An erase or an unsign pulled blanks the replica's own copies, a trim
  /// learned drops its old records, and a start again from the bases
  /// empties its log, each in its transaction; LMDB keeps the pages they
  /// were on as free pages, text and all, until a write reuses them. So
  /// each of those transactions marks a purge owed (`putPurgeOwed`), and a
  /// sync (`sync`, `reset`, each round of `syncLive`) pays it when it ends,
  /// as `erase --purge` does at the remote — also when it failed (a push
  /// refused whole pulls all the same), and a debt a sync could not pay (a
  /// read holding the pages, a `kill -9` in the purge) the next one pays.
  /// A read holding those pages (an older snapshot, this process's or
  /// another's), or a purge that fails, is no failure of the sync, which
  /// is done: the report says it (`unpurged`). Only an LMDB replica: a PostgreSQL one's purge
  /// rewrites every table, its operator's to run. The purge reads the
  /// whole file (its gap scan).
  /// `paying` false leaves a debt for later (`syncLive` after a purge
  /// held by a read: each try reads the whole file and makes every writer
  /// of the log open it afresh).
  func owingPurge(paying: Bool = true, _ sync: () throws -> SyncReport) throws -> SyncReport {
    var unpurged: MsglogError? = nil
    return try owingPurge(paying: paying, unpurged: &unpurged, sync)
  }

  /// `owingPurge`, saying in `unpurged` what kept its purge from finishing
  /// also when the sync failed (and its report is not returned).
  func owingPurge(paying: Bool, unpurged: inout MsglogError?, _ sync: () throws -> SyncReport) throws -> SyncReport {
    var report = SyncReport()
    defer { unpurged = report.unpurged }
    do {
      report = try sync()
    } catch {
      if paying { purgeIfOwed(into: &report) }
      throw error
    }
    if paying { purgeIfOwed(into: &report) }
    return report
  }

  /// Purges the replica when a purge is owed (`owingPurge`); what keeps it
  /// from finishing goes into the report, not out as the sync's failure.
  private func purgeIfOwed(into report: inout SyncReport) {
    do {
      guard let owed = try owedPurge() else { return }
      report.scrubbed = try purge(paying: owed)
    } catch let error as MsglogError {
      report.unpurged = error
    } catch {
      report.unpurged = MsglogError(anyStoreFailure: error)
    }
  }

  /// A remote trimmed before `horizon` while this replica was at or past
  /// the seq before it: the replica trims its own copy the same way, once
  /// it has pulled past it, so that its history is the remote's and its
  /// `export` the remote's byte for byte (SPEC: every copy learns a trim).
  /// The plan is made from the same events as the remote's was, so it is
  /// the same; the replica's pending changes are not events and stay.
  private func learnTrim(before horizon: UInt64) throws {
    guard horizon > 1, store.kind != .memory else { return }
    try writing { writer in
      guard try writer.horizon().seq < horizon, try writer.headSeq() >= horizon,
        let plan = try TrimPlan.make(before: horizon, in: writer)
      else { return }
      _ = try Self.apply(plan, to: writer)
      // A kept local view was stamped before the trim (by a local write
      // since the pull): the trim may change what it stands on, so it goes
      // and the next read makes it again.
      try (writer as? any ReplicaStateWriter)?.putSavedLocalView(nil)
      // The records dropped stay in free pages until a purge (`owingPurge`).
      try (writer as? any ReplicaStateWriter)?.putPurgeOwed(true)
    }
  }

  /// A replica at the seq before a trimmed remote's horizon: the remote
  /// makes no check of its record there (a trim may have dropped it), so
  /// the remote's bases — each stream's list as of that seq, every item
  /// with its text, sender and times — are compared with the replica's own
  /// lists then, which the same log makes the same (as `learnTrim` relies
  /// on). Another log's (an older copy restored, written to and trimmed)
  /// differ, and nothing is taken in. Bases of a later trim than the
  /// hello's say the history moved on meanwhile: this sync ends, and the
  /// next starts again from them.
  private func checkBases(of remote: any SyncRemote, log: ItemID, horizon: UInt64) throws {
    let theirs = try remote.bases(of: log)
    if let moved = theirs.first?.seq, moved != horizon - 1 {
      throw MsglogError.historyTrimmed(horizon: moved + 1)
    }
    let mine: [StreamName: (version: UInt64, slots: [Slot], items: [Item])] = try readingBase { reader in
      var lists: [StreamName: (version: UInt64, slots: [Slot], items: [Item])] = [:]
      for base in try TrimPlan.bases(before: horizon, in: reader) {
        lists[base.stream] = (base.version, base.slots, try Replay.items(base.slots, in: reader))
      }
      return lists
    }
    let same =
      mine.count == theirs.count
      && theirs.allSatisfy { base in
        guard let list = mine[base.stream], list.version == base.version, list.items.count == base.items.count
        else { return false }
        let slots = zip(base.items, base.textSeqs).map { item, text in Slot(id: item.id, seq: text ?? item.seq) }
        return slots == list.slots && zip(list.items, base.items).allSatisfy(Self.sameItem)
      }
    guard same else {
      throw MsglogError.anotherLog(
        remote: remote.shown,
        reason: "its lists at seq \(horizon - 1), before its history begins, are not the replica's")
    }
  }

  /// The replica's item and the remote's base item are one: the same id,
  /// insert, times, text and sender — but the text and sender of one the
  /// remote erased since, which the replica learns as it pulls the erase.
  private static func sameItem(_ mine: Item, _ theirs: Item) -> Bool {
    guard mine.id == theirs.id, mine.seq == theirs.seq, mine.time == theirs.time, mine.edited == theirs.edited
    else { return false }
    if theirs.erased != nil { return true }
    func same(_ a: String?, _ b: String?) -> Bool {
      guard let a, let b else { return a == nil && b == nil }
      return a.hasSameBytes(as: b)
    }
    return mine.erased == nil && mine.text.hasSameBytes(as: theirs.text) && same(mine.sender, theirs.sender)
  }

  /// Makes `location` the replica's remote from now on.
  private func keepRemote(_ location: String) throws {
    try writing { writer in
      guard let replicas = writer as? any ReplicaStateWriter, var state = try replicas.replicaState() else {
        throw MsglogError.notAReplica(location: self.location)
      }
      state.remote = location
      try replicas.putReplicaState(state)
    }
  }

  /// The replica's sync lock; throws when another sync holds it.
  func lockForSync() throws -> AnyObject? {
    switch try store.takeSyncLock() {
    case .taken(let lock): return lock
    case .busy: throw MsglogError.syncRunning(location: location)
    case .needless: return nil
    }
  }

  /// Refuses a remote whose protocol or record format this msglog does not know.
  static func check(_ hello: RemoteHello, of remote: any SyncRemote) throws {
    if !SyncProtocol.speaks(hello.protocolVersion) {
      throw MsglogError.incompatibleRemote(
        remote: remote.shown,
        reason: "it speaks sync protocol \(hello.protocolVersion), this msglog \(SyncProtocol.version): upgrade msglog")
    }
    if hello.recordFormat > Int(EventRecord.newestFormat) {
      throw MsglogError.incompatibleRemote(
        remote: remote.shown,
        reason: "its log holds records of format \(hello.recordFormat), newer than this msglog's: upgrade msglog")
    }
    // A trim keeps the head's seq at least: a history past it would have
    // the replica start again from bases for ever.
    if hello.horizon > hello.head + 1 {
      throw MsglogError.remoteFault(remote: remote.shown, .horizonPastHead(horizon: hello.horizon, head: hello.head))
    }
  }

  /// The replica's record at its head, whose last 4 bytes a pull after it
  /// checks; nil for an empty log, and for one at the seq before its
  /// horizon: a record there is one the replica wrote from a base
  /// (`takeBases`), in its own layout, not the remote's bytes (a
  /// PostgreSQL remote's are whole, an LMDB replica's framed).
  func headRecord() throws -> [UInt8]? {
    try readingBase { reader in
      let head = try reader.headSeq()
      guard head > 0, head >= (try reader.horizon().seq) else { return nil }
      return try reader.withRecord(at: head) { Array($0) }
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

  /// What the remote says an applied change became, which only the pull
  /// can bear out (or, below a horizon the replica starts again from, its
  /// bases: `restartRound`).
  struct Claim {
    var seq: UInt64
    var rebased: Bool
  }

  /// Pushes the pending changes; `claims` gets what the remote says each
  /// applied one became.
  func push(
    to remote: any SyncRemote, state: ReplicaState, into report: inout SyncReport, claims: inout [UInt64: Claim],
    inFlight: ClaimsInFlight? = nil
  ) throws {
    // Said as each batch is learned: a failure of a later one leaves the
    // claims of those before it awaiting their events.
    defer { inFlight?.any = !claims.isEmpty }
    let pending = try pendingChanges()
    var start = 0
    while start < pending.count {
      var end = start
      var bytes = 0
      while end < pending.count && end - start < SyncProtocol.pushChanges
        && (end == start || bytes < SyncProtocol.pushBytes)
      {
        bytes += pending[end].json.count
        end += 1
      }
      let batch = Array(pending[start..<end])
      precondition(state.secret != nil, "syncRound gives a replica its secret before it pushes")
      let answer: PushAnswer
      do {
        answer = try remote.push(
          PushRequest(log: state.log, replica: state.replica, secret: state.secret!, changes: batch))
      } catch let error as MsglogError {
        throw Self.refusedWhole(error, by: remote) ?? error
      }
      guard answer.outcomes.count == batch.count else {
        throw MsglogError.incompatibleRemote(
          remote: remote.shown, reason: "it answered \(answer.outcomes.count) outcomes for \(batch.count) changes")
      }
      // Nothing of an answer is taken in unless each outcome is the change's
      // it stands for, and the remote is not behind what the replica holds
      // of it (a refusal from a remote that never saw the change, say).
      if let (change, named) = zip(batch, answer.numbers).first(where: { $1 != nil && $1 != $0.number }) {
        throw MsglogError.remoteFault(
          remote: remote.shown, .outcomeOfAnotherChange(change: change.number, named: named!))
      }
      let head = try headSeq()
      guard answer.head >= head else {
        throw MsglogError.anotherLog(
          remote: remote.shown,
          reason: "its push answer says it is at seq \(answer.head), behind the replica (at seq \(head))")
      }
      try learn(zip(batch, answer.outcomes).map { ($0, $1) }, from: remote, into: &report, claims: &claims)
      start = end
    }
  }

  /// A push the remote refused whole for want of a right, as
  /// `pushRefused`: over HTTP a 403 (a token that may write no stream, a
  /// replica another token pushes for); in process on PostgreSQL, a role
  /// that may not write there, or a standby. Nil for any other failure.
  private static func refusedWhole(_ error: MsglogError, by remote: any SyncRemote) -> MsglogError? {
    switch error {
    case .remoteForbids(_, let reason): return .pushRefused(remote: remote.shown, reason: reason)
    case .permissionDenied, .readOnly: return .pushRefused(remote: remote.shown, reason: error.description)
    default: return nil
    }
  }

  /// Keeps what the remote did with each change, in one transaction: a
  /// refused change goes to the refusals and, like one that changed
  /// nothing, stops pending. An applied one stops pending only when the
  /// replica holds its event and finds it is the change's (its origin, its
  /// item): until the pull brings it, the seq named is only a claim.
  private func learn(
    _ outcomes: [(ReplicaChange, ChangeOutcome)], from remote: any SyncRemote, into report: inout SyncReport,
    claims: inout [UInt64: Claim]
  ) throws {
    let (learned, settled): ([RefusedChange], Int) = try writing { writer in
      guard let replicas = writer as? any ReplicaStateWriter, let state = try replicas.replicaState() else {
        throw MsglogError.notAReplica(location: location)
      }
      let head = try writer.headSeq()
      // Counted here, not added to outside: a store may run this again.
      var refused: [RefusedChange] = []
      var settled = 0
      for (change, outcome) in outcomes {
        switch outcome {
        case .refused(let reason):
          let refusal = RefusedChange(change: change.number, op: change.opName, stream: change.stream, reason: reason)
          if try replicas.learnedOutcome(ofChange: change.number) == nil {
            try replicas.appendRefused(json: Self.json(of: refusal))
            refused.append(refusal)
          }
        case .unchanged:
          // An append or an insert always adds its item: believed, it
          // would drop the change with nothing done. Another change under
          // its number (a copy of this replica numbering again) did.
          guard change.insertedID == nil else {
            throw MsglogError.changeNumberReused(change: change.number, seq: nil)
          }
        case .applied(let seq, let rebased):
          // Pulled already, the event would have settled the change: an
          // event the replica holds is not the change's.
          guard seq > head else {
            throw MsglogError.remoteFault(
              remote: remote.shown,
              .outcomeNotBorneOut(
                change: change.number, seq: seq, found: try Self.whatIs(seq, in: writer, for: change, of: state)))
          }
          claims[change.number] = Claim(seq: seq, rebased: rebased)
          continue
        }
        try replicas.putLearnedOutcome(outcome, ofChange: change.number)
        try replicas.deletePendingChange(change.number)
        settled += 1
      }
      return (refused, settled)
    }
    report.pushed += settled
    report.refused += learned
  }

  /// Refuses the claims of a push the pull did not bear out: a change the
  /// remote said it applied whose event, now the replica is at the
  /// remote's head, is not there (never dropped: it stays pending).
  func check(_ claims: [UInt64: Claim], of remote: any SyncRemote, state: ReplicaState) throws {
    guard !claims.isEmpty else { return }
    let pending = try pendingChanges()
    try readingBase { reader in
      for change in pending {
        guard let seq = claims[change.number]?.seq else { continue }
        throw MsglogError.remoteFault(
          remote: remote.shown,
          .outcomeNotBorneOut(
            change: change.number, seq: seq, found: try Self.whatIs(seq, in: reader, for: change, of: state)))
      }
    }
  }

  /// What the event at `seq` is, when it is not `change` (for the fault's words).
  static func whatIs(_ seq: UInt64, in reader: any LogReader, for change: ReplicaChange, of state: ReplicaState)
    throws -> String
  {
    let head = try reader.headSeq()
    let horizon = try reader.horizon().seq
    // A pending change was pushed after the replica's history began.
    if seq < horizon { return "history before seq \(horizon) was trimmed before the change was made" }
    guard seq <= head, let event = try reader.event(at: seq) else { return "the remote's head is seq \(head)" }
    guard let origin = event.origin else { return "seq \(seq) was written on the remote itself" }
    guard origin.replica == state.replica else { return "seq \(seq) is another replica's change" }
    guard origin.change == change.number else { return "seq \(seq) is this replica's change \(origin.change)" }
    return "seq \(seq) is not \(change.anOpName) of the change's item"
  }

  /// A refusal as the replica keeps it: `{"pending","op","stream","reason"}`,
  /// the reason as its code and data (`ChangeRefusal`); one this msglog
  /// cannot tell keeps the words it came with as `"error"` (as every
  /// refusal was kept before reasons had codes) and its code, if any.
  static func json(of refusal: RefusedChange) -> [UInt8] {
    var json = JSONWriter()
    json.object { json in
      json.member("pending", refusal.change)
      json.member("op", refusal.op)
      json.member("stream", refusal.stream)
      if case .unknown(let code, let words) = refusal.reason {
        json.member("error", words)
        guard code != nil else { return }
      }
      json.key("reason")
      refusal.reason.write(to: &json)
    }
    return json.take()
  }
}

extension MsglogError {
  /// The remote is not the log the replica copies, or not at its head.
  var isAnotherLog: Bool {
    if case .anotherLog = self { return true }
    return false
  }

  /// The remote holds another secret for the replica's id.
  var isSecretRefused: Bool {
    if case .replicaSecretRefused = self { return true }
    return false
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
    resetAtHorizon = resetAtHorizon ?? round.resetAtHorizon
  }
}
