import CLMDB
import MsglogCore

/// Reading the log and its derived tables in one transaction.
extension LMDBTables.LogTransaction {
  /// The data file's lack of a page this transaction's commit uses
  /// (`Environment.lengthShortfall`).
  func filesCutShort() throws -> LMDBFailure? {
    do {
      return try tables.environment.lengthShortfall(readIn: txn)
    } catch let error as LMDBError {
      throw MsglogError(error)  // said as verify says its problems
    }
  }

  /// The last record's seq; in a log trimmed to its head, the seq before
  /// the horizon.
  func headSeq() throws -> UInt64 {
    let last = try txn.withCursor(tables.events) { cursor -> UInt64 in
      guard let last = try cursor.last() else { return 0 }
      return try Key.seq(last.key)
    }
    return max(last, try horizon().seq - 1)
  }

  /// Records are read in place from the memory map, which stays put for
  /// the transaction: its reader slot keeps writers from reusing the
  /// pages. A read without a slot (`isLockless`) has no such promise.
  var recordsStayMapped: Bool { !tables.isLockless }

  var recordLayout: EventRecord.Layout { tables.recordLayout }

  /// From the horizon at the earliest: the records a trimmed log keeps
  /// below it are read by seq only.
  func forEachRecord(from seq: UInt64, _ body: (UInt64, UnsafeRawBufferPointer) throws -> Bool) throws {
    let from = max(seq, try horizon().seq)
    try txn.withCursor(tables.events) { cursor in
      var entry = try cursor.seek(seq: from)
      while let (key, value) = entry {
        guard try body(try Key.seq(key), value) else { return }
        entry = try cursor.next()
      }
    }
  }

  func withRecord<R>(at seq: UInt64, _ body: (UnsafeRawBufferPointer) throws -> R) throws -> R? {
    try txn.get(tables.events, Key.seq(seq), body)
  }

  /// One cursor for the whole batch, in seq order: consecutive seqs are a
  /// step to the next entry, not a search from the root.
  func forEachRecord(at seqs: [UInt64], _ body: (UInt64, UnsafeRawBufferPointer) throws -> Void) throws {
    try txn.withCursor(tables.events) { cursor in
      var last: UInt64? = nil
      for seq in seqs.sorted() where seq != last {
        let entry = last.map { $0 + 1 == seq } == true ? try cursor.next() : try cursor.seek(seq: seq)
        guard let (key, value) = entry, try Key.seq(key) == seq else {
          last = nil  // a gap: the next one seeks
          continue
        }
        last = seq
        try body(seq, value)
      }
    }
  }

  /// One cursor, steps to the next entries where the next seq is a few
  /// after the last, a search (within the current page when it is there)
  /// otherwise.
  func forEachRecord(
    ascending seqs: UnsafeBufferPointer<UInt64>, _ body: (Int, UnsafeRawBufferPointer) throws -> Void
  ) throws {
    try txn.withCursor(tables.events) { cursor in
      var last: UInt64 = 0
      for place in seqs.indices {
        let seq = seqs[place]
        var entry: Cursor.Entry?
        var found: UInt64 = 0
        if last != 0, seq > last, seq - last <= Self.stepsBeforeSearching {
          // A list's live items are most of a log's records, a few apart:
          // a step costs a fraction of a search within the page.
          repeat {
            entry = try cursor.next()
            guard let (key, _) = entry else { break }
            found = try Key.seq(key)
          } while found < seq
        } else {
          entry = try cursor.seek(seq: seq)
          if let (key, _) = entry { found = try Key.seq(key) }
        }
        guard let (_, value) = entry, found == seq else {
          last = 0  // a gap: the next one searches
          continue
        }
        last = seq
        try body(place, value)
      }
    }
  }

  /// How far ahead `forEachRecord(ascending:)` steps rather than searches.
  static let stepsBeforeSearching: UInt64 = 8

  func streamHead(_ stream: StreamName) throws -> StreamHead? {
    try txn.get(tables.heads, DerivedRows.headKey(stream)) { try DerivedRows.decodeHead(stream: stream, $0) }
  }

  func streamHeads() throws -> [StreamHead] {
    try txn.withCursor(tables.heads) { cursor in
      var heads: [StreamHead] = []
      var entry = try cursor.first()
      while let (key, value) = entry {
        heads.append(try DerivedRows.decodeHead(stream: try Key.streamName(key, table: .heads), value))
        entry = try cursor.next()
      }
      return heads
    }
  }

  func streamHeadNames() throws -> (names: [StreamName], notNames: Int) {
    try txn.withCursor(tables.heads) { cursor in
      var names: [StreamName] = []
      var notNames = 0
      var entry = try cursor.first()
      while let (key, _) = entry {
        if let name = try? Key.streamName(key, table: .heads) { names.append(name) } else { notNames += 1 }
        entry = try cursor.next()
      }
      return (names, notNames)
    }
  }

  func orderNode(_ id: NodeID, of stream: StreamName) throws -> TreeNode<Slot>? {
    try txn.get(tables.order, DerivedRows.nodeKey(stream, id)) { try DerivedRows.decodeNode(id, of: stream, $0) }
  }

  /// The leaves' rows read in place, each decoded straight into `slots`.
  func appendLeafSlots(_ ids: [NodeID], of stream: StreamName, to slots: inout [Slot]) throws {
    var key = DerivedRows.nodeKey(stream, 0)
    let suffix = key.count - 8
    for id in ids {
      key.withUnsafeMutableBytes { $0.storeBytes(of: id.bigEndian, toByteOffset: suffix, as: UInt64.self) }
      let found: Void? = try txn.get(tables.order, key) { row in
        try DerivedRows.appendLeafSlots(id, of: stream, row, to: &slots)
      }
      guard found != nil else { throw StoredOrder.missingLeaf(id, of: stream) }
    }
  }

  func idEntry(_ id: ItemID) throws -> IdEntry? {
    try txn.get(tables.ids, id.bytes) { try DerivedRows.decodeIdEntry(id, $0) }
  }

  func forEachIdEntry(from start: [UInt8], _ body: (ItemID, IdEntry) throws -> Bool) throws {
    try txn.withCursor(tables.ids) { cursor in
      var entry = start.isEmpty ? try cursor.first() : try cursor.seek(start)
      while let (key, value) = entry {
        guard key.count == 16 else { throw DerivedDamage(.ids, "a key of \(key.count) bytes is not an id") }
        let id = ItemID(bytes: key)
        guard try body(id, try DerivedRows.decodeIdEntry(id, value)) else { return }
        entry = try cursor.next()
      }
    }
  }

  func forEachStreamEvent(of stream: StreamName, from seq: UInt64, _ body: (UInt64) throws -> Bool) throws {
    let prefix = Key.streamPrefix(stream)
    try txn.withCursor(tables.streamEvents) { cursor in
      var entry = try cursor.seek(DerivedRows.streamKey(stream, seq))
      while let (key, value) = entry, Key.hasPrefix(key, prefix) {
        guard value.isEmpty else {
          throw DerivedDamage(
            table: "stream-events",
            "the row of stream \(TerminalText.quoted(stream)) at seq \(Key.suffix(key)) is not empty")
        }
        guard try body(Key.suffix(key)) else { return }
        entry = try cursor.next()
      }
    }
  }

  func lastStreamEvent(of stream: StreamName) throws -> UInt64? {
    let prefix = Key.streamPrefix(stream)
    return try txn.withCursor(tables.streamEvents) { cursor in
      // The first key after every key of the stream, then one step back.
      let after = try cursor.seek(DerivedRows.streamKey(stream, UInt64.max))
      if let (key, _) = after, Key.hasPrefix(key, prefix) { return Key.suffix(key) }
      guard let (key, _) = after == nil ? try cursor.last() : try cursor.previous(), Key.hasPrefix(key, prefix)
      else { return nil }
      return Key.suffix(key)
    }
  }

  /// The stream's event index walked backwards from `seq`, each record
  /// read from `events` by its key.
  func forEachStreamRecord(
    of stream: StreamName, downFrom seq: UInt64, _ body: (UInt64, UnsafeRawBufferPointer) throws -> Bool
  ) throws {
    let prefix = Key.streamPrefix(stream)
    try txn.withCursor(tables.streamEvents) { cursor in
      // The first key after (stream, seq), then backwards.
      let after = seq == UInt64.max ? nil : try cursor.seek(DerivedRows.streamKey(stream, seq + 1))
      var entry = after == nil ? try cursor.last() : try cursor.previous()
      while let (key, _) = entry, Key.hasPrefix(key, prefix) {
        let eventSeq = Key.suffix(key)
        let found = try txn.get(tables.events, Key.seq(eventSeq)) { try body(eventSeq, $0) }
        guard let found else {
          throw DerivedDamage(
            table: "stream-events",
            "the index of stream \(TerminalText.quoted(stream)) names seq \(eventSeq), which is not in the log")
        }
        guard found else { return }
        entry = try cursor.previous()
      }
    }
  }

  func checkpoint(of stream: StreamName, atOrBefore seq: UInt64) throws -> Checkpoint? {
    let prefix = Key.streamPrefix(stream)
    return try txn.withCursor(tables.checkpoints) { cursor in
      // The first key after (stream, seq), then one step back.
      let after = seq == UInt64.max ? nil : try cursor.seek(DerivedRows.checkpointKey(stream, seq + 1))
      let entry = after == nil ? try cursor.last() : try cursor.previous()
      guard let (key, value) = entry, Key.hasPrefix(key, prefix) else { return nil }
      return try DerivedRows.decodeCheckpoint(stream: stream, seq: Key.suffix(key), value)
    }
  }

  func checkpointSeqs(of stream: StreamName) throws -> [UInt64] {
    let prefix = Key.streamPrefix(stream)
    return try txn.withCursor(tables.checkpoints) { cursor in
      var seqs: [UInt64] = []
      var entry = try cursor.seek(prefix)
      while let (key, _) = entry, Key.hasPrefix(key, prefix) {
        seqs.append(Key.suffix(key))
        entry = try cursor.next()
      }
      return seqs
    }
  }

  func summary() throws -> RecordedCounts? {
    try txn.get(tables.meta, LMDBTables.summaryKey) { try DerivedRows.decodeSummary($0) }
  }

  func tableCounts() throws -> TableCounts? {
    guard tables.derivedFormatIsCurrent || rebuiltInFormat else { throw MsglogError.outdatedFormat("msglog/1") }
    // A trimmed log counts what it dropped, so the counts still match the head.
    let horizon = try horizon()
    return TableCounts(
      events: try txn.entries(tables.events) + horizon.droppedEvents,
      streamEvents: try txn.entries(tables.streamEvents) + horizon.droppedStreamEvents,
      heads: try txn.entries(tables.heads), ids: try txn.entries(tables.ids), nodes: try txn.entries(tables.order),
      checkpoints: try txn.entries(tables.checkpoints))
  }
}
