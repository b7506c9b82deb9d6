import CLMDB
import MsglogCore

/// A trimmed log in LMDB (`TrimmedHistory.swift`, docs/FORMAT.md): the
/// horizon and the bases are rows of `meta` (`horizon`, `base/NAME`), not
/// derived data; the records the bases read stay in `events` under their
/// seqs, below the horizon every walk starts at. Nothing else is kept
/// below it: the event index begins at the horizon, and a stream's head
/// may name a last seq below it (its base vouches for it).
extension LMDBTables.LogTransaction {
  /// Read once per transaction, then as this transaction leaves it.
  func horizon() throws -> Horizon {
    if let knownHorizon { return knownHorizon }
    let horizon = try txn.get(tables.meta, Horizon.key) { try Horizon.decode($0) } ?? .none
    knownHorizon = horizon
    return horizon
  }

  func bases() throws -> [StreamBase] { try baseRows().map(\.base) }

  func retiredItems() throws -> [RetiredItem] { try baseRows().flatMap(\.retired) }

  /// Each stream's base row (`base/NAME`), decoded: its base and the items it retired.
  private func baseRows() throws -> [(base: StreamBase, retired: [RetiredItem])] {
    let prefix = StreamBase.baseKeyPrefix
    return try txn.withCursor(tables.meta) { cursor in
      var rows: [(base: StreamBase, retired: [RetiredItem])] = []
      var entry = try cursor.seek(prefix)
      while let (key, value) = entry, key.starts(with: prefix) {
        let stream = try Key.streamName(UnsafeRawBufferPointer(rebasing: key[prefix.count...]), table: .base)
        rows.append(try StreamBase.decodeBaseRow(stream: stream, value))
        entry = try cursor.next()
      }
      return rows
    }
  }

  /// One write transaction: all of it commits, or none (a `kill -9`
  /// leaves the log as it was).
  func trim(_ plan: TrimPlan) throws -> UInt64? {
    let before = try horizon()
    let horizon = plan.horizon
    var summary = try summary() ?? RecordedCounts()
    // The records: every one below the horizon but those kept.
    var dropped: UInt64 = 0
    var kept = plan.kept.makeIterator()
    var nextKept = kept.next()
    try txn.withCursor(tables.events) { cursor in
      var entry = try cursor.first()
      while let (key, _) = entry {
        let seq = try Key.seq(key)
        guard seq < horizon else { break }
        while let k = nextKept, k < seq { nextKept = kept.next() }
        if nextKept == seq {
          entry = try cursor.next()
        } else {
          try cursor.delete()
          dropped += 1
          entry = try cursor.seek(seq: seq + 1)
        }
      }
    }
    // The event index and the checkpoints, stream by stream: the base is
    // the one checkpoint left below the horizon.
    var droppedIndex: UInt64 = 0
    for head in try streamHeads() {
      let base = plan.bases.first { $0.stream == head.stream }
      let prefix = Key.streamPrefix(head.stream)
      droppedIndex += try deleteBelow(horizon, in: tables.streamEvents, prefix: prefix)
      if let base {
        summary.checkpoints -= try deleteBelow(base.seq, in: tables.checkpoints, prefix: prefix)
        if try txn.get(tables.checkpoints, DerivedRows.checkpointKey(base.stream, base.seq), { _ in true }) == nil {
          summary.checkpoints += 1
        }
        try putCheckpoint(base)
        // The head names its latest checkpoint: the base, when none came after.
        var head = head
        if head.checkpointVersion <= base.version {
          head.checkpointVersion = base.version
          head.checkpointCount = UInt64(base.slots.count)
          try putStreamHead(head)
        }
      }
    }
    // The id entries of items removed before the horizon stay: their ids
    // stay used (`RetiredItem`), their base rows name them.
    // The bases, replacing those of an earlier trim.
    try clearTrimmedHistory()
    let now = Horizon(
      seq: horizon, droppedEvents: before.droppedEvents + dropped,
      droppedStreamEvents: before.droppedStreamEvents + droppedIndex)
    _ = try putTrimmedHistory(now, bases: plan.bases, retired: plan.retired)
    try putSummary(summary)
    // Pages this transaction emptied were reused for others with the
    // dropped records in them: an older msglog's purge copies every page
    // then (this one's gap scan zeroes what they left, wherever it is).
    try tables.markWholeForPurge(in: txn)
    return dropped
  }

  func putTrimmedHistory(_ horizon: Horizon, bases: [StreamBase], retired: [RetiredItem]) throws -> Bool {
    let retiring = try RetiredItem.byBase(retired, of: bases)
    for base in bases {
      try txn.put(
        tables.meta, StreamBase.baseKey(base.stream), base.encodedAsBase(retiring: retiring[base.stream] ?? []))
    }
    try txn.put(tables.meta, Horizon.key, horizon.encoded())
    knownHorizon = horizon
    try moveContainer(atLeastTo: retired.isEmpty ? LMDBTables.trimmedVersion : LMDBTables.retiringVersion)
    return true
  }

  /// Forgets the horizon and the bases (a replica reset, which copies its
  /// remote afresh).
  func clearTrimmedHistory() throws {
    _ = try txn.delete(tables.meta, Horizon.key)
    knownHorizon = Horizon.none
    try txn.withCursor(tables.meta) { cursor in
      var entry = try cursor.seek(StreamBase.baseKeyPrefix)
      while let (key, _) = entry, key.starts(with: StreamBase.baseKeyPrefix) {
        let next = Array(key)
        try cursor.delete()
        entry = try cursor.seek(next)
      }
    }
  }

  /// Deletes the rows of one stream (`prefix`) below `seq`; how many.
  private func deleteBelow(_ seq: UInt64, in db: Database, prefix: [UInt8]) throws -> UInt64 {
    try txn.withCursor(db) { cursor in
      var deleted: UInt64 = 0
      var entry = try cursor.seek(prefix)
      while let (key, _) = entry, Key.hasPrefix(key, prefix), Key.suffix(key) < seq {
        let next = Array(key)
        try cursor.delete()
        deleted += 1
        entry = try cursor.seek(next)
      }
      return deleted
    }
  }
}
