import MsglogCore

/// A trimmed log over SQL (`PostgresSchema+Trim`): the horizon read with
/// the transaction's opening (or known), the bases where they are, and a
/// trim's deletes sent in the write transaction that decided them, under
/// the head row's lock: all of it commits, or none (a `kill -9` leaves
/// the log as it was).
extension PostgresStore.Access {
  /// Read once per transaction — with its opening round trip, or from
  /// what the last write left known — then as this transaction leaves it.
  func horizon() throws -> Horizon {
    if let knownHorizon { return knownHorizon }
    let row: [UInt8]?
    if let opened = openedHorizon {
      row = opened
    } else {
      let rows = try query(.meta, PostgresSchema.horizonRow)
      row = rows.count == 0 ? nil : rows.copiedBytes(0, 0)
    }
    var horizon = Horizon.none
    if let row { horizon = try Self.decodeHorizon(row) }
    knownHorizon = horizon
    return horizon
  }

  func bases() throws -> [StreamBase] { try baseRows().map(\.base) }

  /// The items the trims retired, named by their streams' base rows.
  func retiredItems() throws -> [RetiredItem] { try baseRows().flatMap(\.retired) }

  /// Each stream's base row, decoded: its base and the items it retired;
  /// none without a horizon (no round trip for a log never trimmed).
  private func baseRows() throws -> [(base: StreamBase, retired: [RetiredItem])] {
    guard try horizon().isTrimmed else { return [] }
    let rows = try query(.meta, PostgresSchema.bases)
    return try (0..<rows.count).map { row in
      let stream = try rows.streamName(row, 0, in: .base)
      return try rows.withBytes(row, 1) { try StreamBase.decodeBaseRow(stream: stream, $0) }
    }
  }

  func trim(_ plan: TrimPlan) throws -> UInt64? {
    precondition(writing, "a trim in a read transaction")
    let before = try horizon()
    let horizon = plan.horizon
    let heads = try streamHeads()
    // The id entries of items removed before the horizon stay: their ids
    // stay used (`RetiredItem`), their base rows name them.
    // The per-stream index rows that go (the events table is its own),
    // the records (every one below the horizon but those kept), each
    // stream's checkpoints below its base (the base is the one left below
    // the horizon), the id entries: one pipeline, its counts read from its
    // end. No summary to keep: PostgreSQL counts its tables by a scan
    // (`verify`), never in a write.
    let counts = [
      PostgresSchema.recordCount(from: before.seq, below: horizon),
      PostgresSchema.deleteRecords(below: horizon, keeping: plan.kept),
    ]
    let deletes = [PostgresSchema.deleteCheckpoints(streams: plan.bases.map(\.stream), below: plan.bases.map(\.seq))]
    try flush()
    let answers = try send(counts + deletes, locking: true).suffix(counts.count + deletes.count).prefix(counts.count)
      .map { $0.uint64(0, 0) ?? 0 }
    let droppedIndex = answers[0]
    let dropped = answers[1]
    // What this transaction knew of streams is stale now; nothing of it is kept.
    cache.forget()
    cache.last.removeAll()
    for base in plan.bases {
      try putCheckpoint(base)
      // The head names its latest checkpoint: the base, when none came after.
      guard var head = heads.first(where: { $0.stream == base.stream }), head.checkpointVersion <= base.version
      else { continue }
      head.checkpointVersion = base.version
      head.checkpointCount = UInt64(base.slots.count)
      try putStreamHead(head)
    }
    let now = Horizon(
      seq: horizon, droppedEvents: before.droppedEvents + dropped,
      droppedStreamEvents: before.droppedStreamEvents + droppedIndex)
    _ = try putTrimmedHistory(now, bases: plan.bases, retired: plan.retired)
    return dropped
  }

  /// Replaces the horizon and the bases, and moves the schema to 7 with
  /// them; the head is never below the seq before the horizon (an import
  /// of bases alone).
  func putTrimmedHistory(_ horizon: Horizon, bases: [StreamBase], retired: [RetiredItem]) throws -> Bool {
    precondition(writing, "a write in a read transaction")
    let retiring = try RetiredItem.byBase(retired, of: bases)
    let version = retired.isEmpty ? PostgresSchema.trimmedVersion : PostgresSchema.retiringVersion
    if (store.schemaVersion ?? 0) < version { buffer.upgradeSchema(to: version) }
    state.head = max(try headSeq(), horizon.seq - 1)
    knownHorizon = horizon
    cache.forget()
    let rows = PostgresSchema.putTrimmedHistory(
      horizon: horizon.encoded(), streams: bases.map(\.stream),
      rows: bases.map { $0.encodedAsBase(retiring: retiring[$0.stream] ?? []) })
    try send(buffer.take() + rows, locking: true)
    return true
  }

  /// The horizon as the transaction's opening read it, decoded, without
  /// asking the server (for what a commit leaves known); nil when it was
  /// not read, or is damaged.
  var horizonWithoutAsking: Horizon? {
    if let knownHorizon { return knownHorizon }
    guard let opened = openedHorizon else { return nil }
    guard let row = opened else { return Horizon.none }
    return try? Self.decodeHorizon(row)
  }

  private static func decodeHorizon(_ row: [UInt8]) throws -> Horizon {
    try row.withUnsafeBytes { bytes throws -> Horizon in try Horizon.decode(bytes) }
  }
}
