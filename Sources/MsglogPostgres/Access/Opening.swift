import MsglogCore

extension PostgresStore {
  /// What a write's opening round trip reads: the head, the server's clock
  /// and whether it is a standby (`PostgresSchema.opening`), then what the
  /// write on the touched streams reads first (`prefetch`).
  struct Opening {
    var head: UInt64
    /// The events' time: the server's clock, never earlier than `lastTime`.
    var time: Timestamp
    /// The server's clock.
    var serverClock: Timestamp
    /// The time of the log's last event (0 for an empty log).
    var lastTime = Timestamp(milliseconds: 0)
    var inRecovery: Bool
    /// The horizon's row (nil: the log was never trimmed), decoded when asked (`Access.horizon`).
    var horizonRow: [UInt8]?

    init(_ rows: Rows, shown: String) throws {
      guard let head = rows.uint64(0, 0), let now = rows.int64(0, 1) else {
        throw MsglogError.notAMsglogDatabase(location: shown, reason: "its msglog.head row is missing")
      }
      self.head = head
      inRecovery = rows.bool(0, 3) == true
      horizonRow = rows.isNull(0, 4) ? nil : rows.copiedBytes(0, 4)
      // Never earlier than the event before: times go forward with seqs,
      // whichever machine's commit came first.
      serverClock = Timestamp(milliseconds: now)
      if !rows.isNull(0, 2),
        let last = try? rows.withBytes(0, 2, { try EventRecord.decode($0, verifyingChecksum: false) })
      {
        lastTime = last.time
      }
      time = max(serverClock, lastTime)
    }

    /// The statements that fetch what a write on `streams` reads first:
    /// each stream's head, the root of its order tree, and its last event
    /// (for the head check). Sent in the opening pipeline, after the head.
    static func prefetch(_ streams: [StreamName]) -> [Statement] {
      guard !streams.isEmpty else { return [] }
      return [PostgresSchema.streamHeads(streams), PostgresSchema.rootNodes(streams)]
        + streams.map(PostgresSchema.lastStreamRecord)
    }
  }
}

extension PostgresStore.StreamCache {
  /// What `Opening.prefetch(streams)` fetched; a stream's last event only
  /// from `horizon` on (below it, a record a base reads is no event of
  /// the stream's walk: the base stands for them).
  init(prefetched rows: [Rows], for streams: [StreamName], from horizon: UInt64) throws {
    guard rows.count == streams.count + 2 else { return }
    for stream in streams { heads[stream] = .some(nil) }
    for row in 0..<rows[0].count {
      let stream = try rows[0].streamName(row, 0, in: .heads)
      heads[stream] = try rows[0].withBytes(row, 1) { try DerivedRows.decodeHead(stream: stream, $0) }
    }
    for row in 0..<rows[1].count {
      let stream = try rows[1].streamName(row, 0, in: .order)
      let node = rows[1].uint64(row, 1)!
      nodes[PostgresStore.NodeKey(stream: stream, n: node)] = try rows[1].withBytes(row, 2) {
        try DerivedRows.decodeNode(node, of: stream, $0)
      }
    }
    for (stream, found) in zip(streams, rows[2...]) {
      let seq = found.count == 0 ? nil : found.uint64(0, 0)
      last[stream] = seq.map { $0 >= horizon } == true ? (seq!, found.copiedBytes(0, 1)) : .some(nil)
    }
  }
}
