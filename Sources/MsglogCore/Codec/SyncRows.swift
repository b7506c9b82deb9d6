/// The byte layout of sync's rows (docs/FORMAT.md, "Sync"), sealed with a
/// checksum over their table, key and value as derived rows are
/// (`DerivedRows`). All integers are big-endian.
package enum SyncRows {
  package static let logKey = Array("log".utf8)
  package static let replicaKey = Array("replica".utf8)
  /// A replica's kept local view (`SavedLocalView`), in `meta`.
  package static let localViewKey = Array("local-view".utf8)
  /// In a replica's `meta`, empty, while a purge is owed: a pull made it
  /// forget (an erase, an unsign, a trim, a start again) and no purge has
  /// scrubbed the free pages that left since (`EventLog.owingPurge`).
  package static let purgeOwedKey = Array("purge-owed".utf8)

  // MARK: - The log's id: 16 bytes

  package static func encodeLogID(_ id: ItemID) -> [UInt8] { DerivedRows.seal(.log, key: logKey, id.bytes) }

  package static func decodeLogID(_ row: UnsafeRawBufferPointer) throws(DerivedDamage) -> ItemID {
    var r = try DerivedRows.open(.log, key: logKey, row, what: "the log's id")
    let id = try r.uuid()
    try r.end()
    return id
  }

  // MARK: - A replica's progress at its remote: u64 changes done; since
  // replicas have secrets (format 5), then u64 the first change whose
  // outcome is kept whatever it was, and the 32-byte SHA-256 of its secret

  /// The row of `progress`: the first form while it has no secret and
  /// forgot nothing (what an older msglog reads), else the second.
  package static func encode(_ progress: ReplicaProgress, of replica: ItemID) -> [UInt8] {
    // Outcomes are forgotten only on a push, which carries a secret.
    precondition(progress.secret != nil || progress.keptFrom == 1, "a replica that forgot outcomes has a secret")
    var out = [UInt8](bigEndian: progress.done)
    if let secret = progress.secret {
      out.appendBigEndian(progress.keptFrom)
      out.append(contentsOf: secret.bytes)
    }
    return DerivedRows.seal(.replicas, key: replica.bytes, out)
  }

  package static func decodeProgress(of replica: ItemID, _ row: UnsafeRawBufferPointer) throws(DerivedDamage)
    -> ReplicaProgress
  {
    var r = try DerivedRows.open(.replicas, key: replica.bytes, row, what: "the progress of replica \(replica.text)")
    var progress = ReplicaProgress(done: try r.u64())
    if r.remaining > 0 {
      progress.keptFrom = try r.u64()
      progress.secret = SHA256.Digest(Array(try r.take(SHA256.Digest.length)))
      guard progress.keptFrom >= 1, progress.keptFrom <= progress.done + 1 else {
        throw DerivedDamage(
          .replicas,
          "replica \(replica.text) keeps outcomes from change \(progress.keptFrom), past its \(progress.done) done")
      }
    }
    try r.end()
    return progress
  }

  // MARK: - Outcomes: u8 kind (1 applied, 2 unchanged, 3 refused), then
  // applied: u64 seq, u8 rebased; refused: u32 length + the reason in
  // UTF-8 — its code and data as a JSON object, or (kept by a msglog
  // before reasons had codes, or a code this one does not know) its words

  /// A remote's key for a replica's change: the replica's 16 bytes, then the change as u64.
  package static func outcomeKey(_ change: UInt64, by replica: ItemID) -> [UInt8] {
    var key = replica.bytes
    key.appendBigEndian(change)
    return key
  }

  /// `table`: `.syncOutcomes` at a remote (keyed by `outcomeKey`), `.learned`
  /// in a replica (keyed by the change alone).
  package static func encode(_ outcome: ChangeOutcome, _ table: DerivedRows.Table, key: [UInt8]) -> [UInt8] {
    var out: [UInt8] = []
    switch outcome {
    case .applied(let seq, let rebased):
      out.append(1)
      out.appendBigEndian(seq)
      out.append(rebased ? 1 : 0)
    case .unchanged:
      out.append(2)
    case .refused(let reason):
      let stored = reason.stored
      out.append(3)
      out.appendBigEndian(UInt32(stored.count))
      out.append(contentsOf: stored)
    }
    return DerivedRows.seal(table, key: key, out)
  }

  package static func decodeOutcome(_ table: DerivedRows.Table, key: [UInt8], _ row: UnsafeRawBufferPointer)
    throws(DerivedDamage) -> ChangeOutcome
  {
    var r = try DerivedRows.open(table, key: key, row, what: "an outcome")
    let outcome: ChangeOutcome
    switch try r.u8() {
    case 1:
      let seq = try r.u64()
      switch try r.u8() {
      case 0: outcome = .applied(seq: seq, rebased: false)
      case 1: outcome = .applied(seq: seq, rebased: true)
      default: throw DerivedDamage(table, "an outcome has a bad rebased flag")
      }
    case 2: outcome = .unchanged
    case 3: outcome = .refused(ChangeRefusal(stored: try r.text()))
    case let kind: throw DerivedDamage(table, "an outcome is of unknown kind \(kind)")
    }
    try r.end()
    return outcome
  }

  // MARK: - A replica's state: 16B replica, 16B log, u64 next change,
  // u64 remote head, u32 length + the remote's location in UTF-8; since
  // replicas have secrets (format 5), then its 32-byte secret

  package static func encode(_ state: ReplicaState) -> [UInt8] {
    var out = state.replica.bytes + state.log.bytes
    out.appendBigEndian(state.nextChange)
    out.appendBigEndian(state.remoteHead)
    out.appendBigEndian(UInt32(state.remote.utf8.count))
    out.append(contentsOf: state.remote.utf8)
    if let secret = state.secret { out.append(contentsOf: secret.bytes) }
    return DerivedRows.seal(.replica, key: replicaKey, out)
  }

  package static func decodeReplicaState(_ row: UnsafeRawBufferPointer) throws(DerivedDamage) -> ReplicaState {
    var r = try DerivedRows.open(.replica, key: replicaKey, row, what: "the replica's state")
    let replica = try r.uuid()
    let log = try r.uuid()
    let next = try r.u64()
    let head = try r.u64()
    let remote = try r.text()
    var state = ReplicaState(replica: replica, log: log, remote: remote, nextChange: next, remoteHead: head)
    if r.remaining > 0 { state.secret = ReplicaSecret(bytes: Array(try r.take(ReplicaSecret.length))) }
    try r.end()
    return state
  }

  // MARK: - A replica's pending changes and refusals: JSON bytes, keyed by the change as u64

  package static func changeKey(_ change: UInt64) -> [UInt8] { [UInt8](bigEndian: change) }

  package static func sealJSON(_ json: [UInt8], _ table: DerivedRows.Table, change: UInt64) -> [UInt8] {
    DerivedRows.seal(table, key: changeKey(change), json)
  }

  package static func openJSON(_ table: DerivedRows.Table, change: UInt64, _ row: UnsafeRawBufferPointer)
    throws(DerivedDamage) -> [UInt8]
  {
    var r = try DerivedRows.open(table, key: changeKey(change), row, what: "change \(change)")
    return r.rest()
  }
}
