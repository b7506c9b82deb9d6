import CLMDB
import MsglogCore

/// Appending records and putting derived rows in one write transaction.
extension LMDBTables.LogTransaction {
  func appendRecord(_ record: [UInt8], of event: Event) throws {
    // MDB_APPEND: the key is past every other, so LMDB skips the search
    // and fills pages completely; it refuses a key out of order.
    try txn.put(tables.events, Key.seq(event.seq), record, flags: UInt32(MDB_APPEND))
    if let needed = record.first.flatMap(LMDBTables.containerFormat.firstVersion(holding:)) {
      try moveContainer(atLeastTo: needed)
    }
  }

  /// Writes an erased record over the one at its seq (no MDB_APPEND: the
  /// key is there). LMDB copies the page on write: the old bytes stay in a
  /// page on the free list, which `msglog purge` scrubs.
  ///
  /// The copy written in its place holds none of them when it is made
  /// here, from the page in the file, in a process's first write, and the
  /// record stays in its page: it is first overwritten with zeros of its
  /// own length (LMDB writes a value of the same length over the old one,
  /// in the copy it just made, whose unused middle is zeros: a new page
  /// buffer), then put as it is, shorter; the bytes a shorter node leaves
  /// in the unused middle are those zeros or copies of live nodes below it
  /// (which stay in this page: the `events` of old records only shrink, so
  /// a later erase of one copies this page, or marks it). Otherwise the key
  /// is marked (`markForPurge`: an older msglog's purge copies its page;
  /// this one's gap scan zeroes the unused middle of every page):
  /// - after a first write LMDB reuses page buffers uncleared, and they may
  ///   hold the text from a page the process had in memory before;
  /// - a page this transaction changed already may hold, in its unused
  ///   middle, a copy of this record's text that the shrinking of a record
  ///   above it left there;
  /// - a record that grows (an erased one kept in overflow pages before)
  ///   may split its page, leaving copies of the nodes that moved right in
  ///   the left page.
  func replaceRecord(_ record: [UInt8], of event: Event) throws {
    let key = Key.seq(event.seq)
    let environment = tables.environment
    if dataFileMap == nil { dataFileMap = environment.mappedRanges() }
    let (before, unchanged) =
      try txn.get(tables.events, key) { value in
        let at = UInt(bitPattern: value.baseAddress)
        return (value.count, dataFileMap!.contains { $0.contains(at) })
      } ?? (0, false)
    if before > 0 { try txn.put(tables.events, key, [UInt8](repeating: 0, count: before)) }
    try txn.put(tables.events, key, record)
    // A record no longer than it was stays within its page (no split)
    // when it was kept in the page: one in LMDB's overflow pages (past
    // about half a page) leaves a node of a few bytes, which grows.
    let pageAlone = record.count <= before && before <= environment.pageSize / 2 - 64
    replacedRecords += 1
    replacementMaySplit = replacementMaySplit || !pageAlone
    if environment.hasWritten || !unchanged || !pageAlone {
      try markForPurge(tables.events, key: key, pageAlone: pageAlone && unchanged)
    }
  }

  /// What the marks cannot name, said before the commit: a page that split
  /// went through a copy LMDB then reuses, uncleared, for the next page
  /// the transaction writes; when another record was rewritten too, that
  /// copy may hold its text. An older msglog's purge copies every page
  /// then (this one's gap scan reads every page anyway).
  func finishPurgeMarks() throws {
    if replacedRecords > 1, replacementMaySplit { try tables.markWholeForPurge(in: txn) }
  }

  /// Moves `meta`'s format on to `version` unless it says that or a newer
  /// one already: read once per transaction, written once.
  func moveContainer(atLeastTo version: Int) throws {
    if containerVersion == nil {
      let value = try txn.get(tables.meta, LMDBTables.formatKey) { String(decoding: $0, as: UTF8.self) }
      containerVersion = try LMDBTables.containerFormat.version(of: value, location: tables.shown) ?? 0
    }
    guard let known = containerVersion, known < version else { return }
    try txn.put(tables.meta, LMDBTables.formatKey, Array(LMDBTables.containerFormat.stored(version).utf8))
    containerVersion = version
  }

  func putStreamHead(_ head: StreamHead) throws {
    try txn.put(tables.heads, DerivedRows.headKey(head.stream), DerivedRows.encode(head))
  }

  func putOrderNode(_ node: TreeNode<Slot>, id: NodeID, of stream: StreamName) throws {
    try txn.put(tables.order, DerivedRows.nodeKey(stream, id), DerivedRows.encode(node, id: id, of: stream))
  }

  func deleteOrderNode(_ id: NodeID, of stream: StreamName) throws {
    try txn.delete(tables.order, DerivedRows.nodeKey(stream, id))
  }

  func putStreamEvent(_ seq: UInt64, of stream: StreamName) throws {
    try txn.put(tables.streamEvents, DerivedRows.streamKey(stream, seq), [])
  }

  func putCheckpoint(_ checkpoint: Checkpoint) throws {
    try txn.put(
      tables.checkpoints, DerivedRows.checkpointKey(checkpoint.stream, checkpoint.seq), DerivedRows.encode(checkpoint)
    )
  }

  func putIdEntry(_ entry: IdEntry, for id: ItemID) throws {
    try txn.put(tables.ids, id.bytes, DerivedRows.encode(entry, for: id))
  }

  func putSummary(_ summary: RecordedCounts) throws {
    try txn.put(tables.meta, LMDBTables.summaryKey, DerivedRows.encode(summary))
  }

  func clearDerived() throws {
    for db in [tables.heads, tables.order, tables.ids, tables.streamEvents, tables.checkpoints] { try txn.empty(db) }
    try txn.delete(tables.meta, LMDBTables.summaryKey)
    // A replica's kept local view names the old tree's nodes.
    try txn.delete(tables.meta, SyncRows.localViewKey)
    // What is rebuilt now is in this version's format (format 3 is format
    // 2 with newer records, and stays).
    if try txn.get(tables.meta, LMDBTables.formatKey, { Array($0) }) == LMDBTables.legacyFormatValue {
      try txn.put(tables.meta, LMDBTables.formatKey, LMDBTables.repairedFormatValue)
    }
    rebuiltInFormat = true
  }
}
