import CLibPQ
import MsglogCore

#if canImport(Glibc)
  import Glibc
#endif

extension PostgresStore {
  /// `LogReader`/`LogWriter` over one transaction on one connection.
  ///
  /// Reads are single statements (in batches where the caller asks for
  /// many rows). Writes are buffered and sent as one statement per table
  /// (`INSERT … SELECT * FROM unnest($1, $2, …)`), all in one pipeline:
  /// before the next read (so the transaction reads its own writes) and at
  /// commit, together with moving the head, the notification and `COMMIT`.
  final class Access: LogWriter {
    let connection: Connection
    unowned let store: PostgresStore
    let writing: Bool
    /// The head seq: locked at the start of a write transaction, then moved by appends.
    private var head: UInt64?

    // Buffered writes.
    private var events: [(seq: UInt64, stream: [UInt8], version: UInt64, inserted: ItemID?, record: [UInt8])] = []
    private var heads: [StreamName: (root: NodeID, row: [UInt8])] = [:]
    private var nodes: [NodeKey: [UInt8]?] = [:]
    private var ids: [ItemID: [UInt8]] = [:]
    private var checkpoints: [NodeKey: [UInt8]] = [:]
    private var summaryRow: [UInt8]? = nil
    private var cleared = false
    /// This transaction appends the log's first record of format 2: it
    /// moves the schema to version 2 (`PostgresStore.schemaVersion`).
    private(set) var upgradesSchema = false
    private var upgradeSent = false
    private var pending: Bool { !dirty.isEmpty || cleared }
    /// The tables with buffered writes: a read of another table need not wait for them.
    private var dirty: Set<Table> = []

    enum Table { case events, streams, nodes, ids, checkpoints, meta }

    // Read by the opening round trip of a write (see `prefetch`), and kept
    // until the transaction's own writes replace them.
    private var cachedHeads: [StreamName: StreamHead?] = [:]
    private var cachedLast: [StreamName: (seq: UInt64, record: [UInt8])?] = [:]
    private var cachedNodes: [NodeKey: TreeNode<Slot>] = [:]

    struct NodeKey: Hashable {
      var stream: StreamName
      var n: UInt64
    }

    init(connection: Connection, store: PostgresStore, writing: Bool, head: UInt64? = nil) {
      self.connection = connection
      self.store = store
      self.writing = writing
      self.head = head
    }

    /// Runs a read of `table`, after sending what is buffered for it.
    private func query(_ table: Table, _ sql: String, _ parameters: [Parameter] = []) throws -> Rows {
      if cleared || dirty.contains(table) { try flush() }
      return try connection.execute(sql, parameters)
    }

    /// The statements that fetch what a write on `streams` reads first: each
    /// stream's head, its last event (for the head check), and the root of
    /// its order tree. Sent in the opening pipeline, right after the lock.
    static func prefetch(_ streams: [StreamName]) -> [Statement] {
      guard !streams.isEmpty else { return [] }
      let names = Parameter.byteas(streams.map(\.bytes))
      var statements = [
        Statement("SELECT stream, head FROM msglog.streams WHERE stream = ANY($1)", [names]),
        Statement(
          "SELECT n.stream, n.node, n.body FROM msglog.nodes n JOIN msglog.streams s ON s.stream = n.stream AND s.root = n.node WHERE s.stream = ANY($1)",
          [names]),
      ]
      for stream in streams {
        statements.append(
          Statement(
            "SELECT seq, record FROM msglog.events WHERE stream = $1 ORDER BY seq DESC LIMIT 1", [.bytes(stream.bytes)])
        )
      }
      return statements
    }

    /// Keeps what `prefetch` fetched.
    func adopt(prefetched rows: [Rows], for streams: [StreamName]) throws {
      guard rows.count == streams.count + 2 else { return }
      for stream in streams { cachedHeads[stream] = .some(nil) }
      for row in 0..<rows[0].count {
        guard let name = String(validating: rows[0].bytes(row, 0), as: UTF8.self) else { continue }
        let stream = StreamName(name)
        cachedHeads[stream] = try DerivedRows.decodeHead(stream: stream, rows[0].bytes(row, 1))
      }
      for row in 0..<rows[1].count {
        guard let name = String(validating: rows[1].bytes(row, 0), as: UTF8.self) else { continue }
        let stream = StreamName(name)
        let node = rows[1].uint64(row, 1)!
        cachedNodes[NodeKey(stream: stream, n: node)] = try DerivedRows.decodeNode(
          node, of: stream, rows[1].bytes(row, 2))
      }
      for (stream, last) in zip(streams, rows[2...]) {
        cachedLast[stream] = last.count == 0 ? .some(nil) : (last.uint64(0, 0)!, Array(last.bytes(0, 1)))
      }
    }

    // MARK: LogReader

    func headSeq() throws -> UInt64 {
      if let head { return head }
      let value = try query(.events, "SELECT seq FROM msglog.head WHERE id = 1").uint64(0, 0) ?? 0
      head = value
      return value
    }

    /// The log in chunks of 4,096 records by key, each a statement of its
    /// own (so that writes can go in between, as a rebuild does).
    func forEachRecord(from seq: UInt64, _ body: (UInt64, UnsafeRawBufferPointer) throws -> Bool) throws {
      var next = max(seq, 1)
      while true {
        let rows = try query(
          .events, "SELECT seq, record FROM msglog.events WHERE seq >= $1 ORDER BY seq LIMIT 4096", [.uint64(next)])
        for row in 0..<rows.count {
          let seq = rows.uint64(row, 0)!
          guard try body(seq, rows.bytes(row, 1)) else { return }
          next = seq + 1
        }
        if rows.count < 4096 { return }
      }
    }

    func withRecord<R>(at seq: UInt64, _ body: (UnsafeRawBufferPointer) throws -> R) throws -> R? {
      for case let (last?)? in cachedLast.values where last.seq == seq {
        return try last.record.withUnsafeBytes(body)
      }
      let rows = try query(.events, "SELECT record FROM msglog.events WHERE seq = $1", [.uint64(seq)])
      return rows.count == 0 ? nil : try body(rows.bytes(0, 0))
    }

    func forEachRecord(at seqs: [UInt64], _ body: (UInt64, UnsafeRawBufferPointer) throws -> Void) throws {
      guard !seqs.isEmpty else { return }
      let wanted = seqs.sorted()
      if let first = wanted.first, let last = wanted.last, last - first < UInt64(wanted.count) * 2 {
        // Dense (a list of appended items): one index range scan reads
        // neighbouring rows from neighbouring pages, cheaper than as many
        // probes; the few rows between are skipped here.
        let rows = try query(
          .events, "SELECT seq, record FROM msglog.events WHERE seq BETWEEN $1 AND $2 ORDER BY seq",
          [.uint64(first), .uint64(last)])
        var next = 0
        for row in 0..<rows.count {
          let seq = rows.uint64(row, 0)!
          while next < wanted.count, wanted[next] < seq { next += 1 }
          guard next < wanted.count else { return }
          if wanted[next] == seq { try body(seq, rows.bytes(row, 1)) }
        }
        return
      }
      let rows = try query(
        .events, "SELECT seq, record FROM msglog.events WHERE seq = ANY($1) ORDER BY seq", [.int64s(seqs)])
      for row in 0..<rows.count { try body(rows.uint64(row, 0)!, rows.bytes(row, 1)) }
    }

    func streamHead(_ stream: StreamName) throws -> StreamHead? {
      if let cached = cachedHeads[stream] { return cached }
      let rows = try query(.streams, "SELECT head FROM msglog.streams WHERE stream = $1", [.bytes(stream.bytes)])
      return rows.count == 0 ? nil : try DerivedRows.decodeHead(stream: stream, rows.bytes(0, 0))
    }

    func streamHeads() throws -> [StreamHead] {
      // bytea compares bytewise: the order of LMDB's keys.
      let rows = try query(.streams, "SELECT stream, head FROM msglog.streams ORDER BY stream")
      return try (0..<rows.count).map { row in
        guard let name = String(validating: rows.bytes(row, 0), as: UTF8.self) else {
          throw DerivedDamage(.heads, "a stream name is not UTF-8")
        }
        return try DerivedRows.decodeHead(stream: StreamName(name), rows.bytes(row, 1))
      }
    }

    func orderNode(_ id: NodeID, of stream: StreamName) throws -> TreeNode<Slot>? {
      try orderNodes([id], of: stream)[id]
    }

    func orderNodes(_ ids: [NodeID], of stream: StreamName) throws -> [NodeID: TreeNode<Slot>] {
      guard !ids.isEmpty else { return [:] }
      var cached: [NodeID: TreeNode<Slot>] = [:]
      for id in ids { cached[id] = cachedNodes[NodeKey(stream: stream, n: id)] }
      if cached.count == ids.count { return cached }
      let rows = try query(
        .nodes, "SELECT node, body FROM msglog.nodes WHERE stream = $1 AND node = ANY($2)",
        [.bytes(stream.bytes), .int64s(ids)])
      var nodes: [NodeID: TreeNode<Slot>] = [:]
      for row in 0..<rows.count {
        let id = rows.uint64(row, 0)!
        nodes[id] = try DerivedRows.decodeNode(id, of: stream, rows.bytes(row, 1))
      }
      return nodes
    }

    func idEntry(_ id: ItemID) throws -> IdEntry? { try idEntries([id])[id] }

    func idEntries(_ ids: [ItemID]) throws -> [ItemID: IdEntry] {
      guard !ids.isEmpty else { return [:] }
      let rows = try query(.ids, "SELECT id, entry FROM msglog.ids WHERE id = ANY($1)", [.uuids(ids)])
      var entries: [ItemID: IdEntry] = [:]
      for row in 0..<rows.count {
        let id = ItemID(bytes: rows.bytes(row, 0))
        entries[id] = try DerivedRows.decodeIdEntry(id, rows.bytes(row, 1))
      }
      return entries
    }

    func forEachIdEntry(from start: [UInt8], _ body: (ItemID, IdEntry) throws -> Bool) throws {
      // uuid compares bytewise too. Start at the first id at or after `start` (padded to 16 bytes).
      var next = ItemID(bytes: (start + [UInt8](repeating: 0, count: 16)).prefix(16).withUnsafeBytes { $0 })
      var inclusive = true
      while true {
        let rows = try query(
          .ids, "SELECT id, entry FROM msglog.ids WHERE id \(inclusive ? ">=" : ">") $1 ORDER BY id LIMIT 4096",
          [.id(next)])
        for row in 0..<rows.count {
          let id = ItemID(bytes: rows.bytes(row, 0))
          guard try body(id, try DerivedRows.decodeIdEntry(id, rows.bytes(row, 1))) else { return }
          next = id
          inclusive = false
        }
        if rows.count < 4096 { return }
      }
    }

    func forEachStreamEvent(of stream: StreamName, from seq: UInt64, _ body: (UInt64) throws -> Bool) throws {
      var next = seq
      while true {
        let rows = try query(
          .events, "SELECT seq FROM msglog.events WHERE stream = $1 AND seq >= $2 ORDER BY seq LIMIT 65536",
          [.bytes(stream.bytes), .uint64(next)])
        for row in 0..<rows.count {
          let seq = rows.uint64(row, 0)!
          guard try body(seq) else { return }
          next = seq + 1
        }
        if rows.count < 65536 { return }
      }
    }

    /// Newest first, in growing batches: an undo usually needs the last few
    /// events only, a rebase those since the version it was made at.
    func forEachStreamRecord(
      of stream: StreamName, downFrom seq: UInt64, _ body: (UInt64, UnsafeRawBufferPointer) throws -> Bool
    ) throws {
      var next = seq
      var batch = 16
      while true {
        let rows = try query(
          .events,
          "SELECT seq, record FROM msglog.events WHERE stream = $1 AND seq <= $2 ORDER BY seq DESC LIMIT \(batch)",
          [.bytes(stream.bytes), .uint64(next)])
        for row in 0..<rows.count {
          let seq = rows.uint64(row, 0)!
          guard try body(seq, rows.bytes(row, 1)) else { return }
          guard seq > 1 else { return }
          next = seq - 1
        }
        if rows.count < batch { return }
        batch = min(batch * 4, 4096)
      }
    }

    func lastStreamEvent(of stream: StreamName) throws -> UInt64? {
      if let cached = cachedLast[stream] { return cached?.seq }
      return try query(.events, "SELECT max(seq) FROM msglog.events WHERE stream = $1", [.bytes(stream.bytes)]).uint64(
        0, 0)
    }

    func checkpoint(of stream: StreamName, atOrBefore seq: UInt64) throws -> Checkpoint? {
      let rows = try query(
        .checkpoints,
        "SELECT seq, body FROM msglog.checkpoints WHERE stream = $1 AND seq <= $2 ORDER BY seq DESC LIMIT 1",
        [.bytes(stream.bytes), .uint64(seq)])
      guard rows.count > 0 else { return nil }
      return try DerivedRows.decodeCheckpoint(stream: stream, seq: rows.uint64(0, 0)!, rows.bytes(0, 1))
    }

    func checkpointSeqs(of stream: StreamName) throws -> [UInt64] {
      let rows = try query(
        .checkpoints, "SELECT seq FROM msglog.checkpoints WHERE stream = $1 ORDER BY seq", [.bytes(stream.bytes)])
      return (0..<rows.count).map { rows.uint64($0, 0)! }
    }

    func summary() throws -> RecordedCounts? {
      let rows = try query(.meta, "SELECT value FROM msglog.meta WHERE key = 'summary'")
      return rows.count == 0 ? nil : try DerivedRows.decodeSummary(rows.bytes(0, 0))
    }

    /// Counting a table's rows is a scan in PostgreSQL: the database's own
    /// constraints (unique seqs, stream versions and inserted ids) guard the
    /// log instead.
    func tableCounts() throws -> TableCounts? { nil }

    // MARK: LogWriter

    func appendRecord(_ record: [UInt8], of event: Event) throws {
      precondition(writing, "a write in a read transaction")
      var inserted: ItemID? = nil
      if case .insert(let id, _, _, _) = event.op { inserted = id }
      let seq = event.seq
      events.append((seq, event.stream.bytes, event.version, inserted, record))
      cachedLast[event.stream] = (seq, record)
      dirty.insert(.events)
      head = seq
      if record.first == EventRecord.formatVersion2, !upgradesSchema, !store.schemaHoldsNewRecords {
        upgradesSchema = true
        dirty.insert(.meta)
      }
    }

    func putStreamHead(_ head: StreamHead) throws {
      heads[head.stream] = (head.root, DerivedRows.encode(head))
      cachedHeads[head.stream] = head
      dirty.insert(.streams)
    }

    func putOrderNode(_ node: TreeNode<Slot>, id: NodeID, of stream: StreamName) throws {
      nodes[NodeKey(stream: stream, n: id)] = DerivedRows.encode(node, id: id, of: stream)
      cachedNodes[NodeKey(stream: stream, n: id)] = nil
      dirty.insert(.nodes)
    }

    func deleteOrderNode(_ id: NodeID, of stream: StreamName) throws {
      nodes[NodeKey(stream: stream, n: id)] = .some(nil)
      cachedNodes[NodeKey(stream: stream, n: id)] = nil
      dirty.insert(.nodes)
    }

    func putIdEntry(_ entry: IdEntry, for id: ItemID) throws {
      ids[id] = DerivedRows.encode(entry, for: id)
      dirty.insert(.ids)
    }

    /// `msglog.events` holds each inserted id once (a unique column).
    var enforcesUniqueInsertedIDs: Bool { true }

    /// Each read is a round trip: batches fetch their id rows at once.
    var prefersBatchedReads: Bool { true }

    /// The events table is its own per-stream index here.
    func putStreamEvent(_ seq: UInt64, of stream: StreamName) throws {}

    func putCheckpoint(_ checkpoint: Checkpoint) throws {
      checkpoints[NodeKey(stream: checkpoint.stream, n: checkpoint.seq)] = DerivedRows.encode(checkpoint)
      dirty.insert(.checkpoints)
    }

    func putSummary(_ summary: RecordedCounts) throws {
      summaryRow = DerivedRows.encode(summary)
      dirty.insert(.meta)
    }

    func clearDerived() throws {
      cachedHeads.removeAll()
      cachedNodes.removeAll()
      heads.removeAll()
      nodes.removeAll()
      ids.removeAll()
      checkpoints.removeAll()
      summaryRow = nil
      cleared = true
    }

    // MARK: Sending

    /// The buffered writes as statements, one per table and kind.
    private func statements() -> [Statement] {
      var out: [Statement] = []
      if cleared {
        out += [
          Statement("DELETE FROM msglog.streams"), Statement("DELETE FROM msglog.nodes"),
          Statement("DELETE FROM msglog.ids"), Statement("DELETE FROM msglog.checkpoints"),
          Statement("DELETE FROM msglog.meta WHERE key = 'summary'"),
        ]
      }
      if !events.isEmpty {
        out.append(
          Statement(
            "INSERT INTO msglog.events (seq, stream, version, inserted, record) SELECT * FROM unnest($1::int8[], $2::bytea[], $3::int8[], $4::uuid[], $5::bytea[])",
            [
              .int64s(events.map(\.seq)), .byteas(events.map(\.stream)), .int64s(events.map(\.version)),
              .uuids(events.map(\.inserted)), .byteas(events.map(\.record)),
            ]))
      }
      if !heads.isEmpty {
        out.append(
          Statement(
            "INSERT INTO msglog.streams (stream, root, head) SELECT * FROM unnest($1::bytea[], $2::int8[], $3::bytea[]) ON CONFLICT (stream) DO UPDATE SET root = EXCLUDED.root, head = EXCLUDED.head",
            [.byteas(heads.keys.map(\.bytes)), .int64s(heads.values.map(\.root)), .byteas(heads.values.map(\.row))]))
      }
      let written = nodes.compactMap { key, body in body.map { (key, $0) } }
      if !written.isEmpty {
        out.append(
          Statement(
            "INSERT INTO msglog.nodes (stream, node, body) SELECT * FROM unnest($1::bytea[], $2::int8[], $3::bytea[]) ON CONFLICT (stream, node) DO UPDATE SET body = EXCLUDED.body",
            [.byteas(written.map(\.0.stream.bytes)), .int64s(written.map(\.0.n)), .byteas(written.map(\.1))]))
      }
      let deleted = nodes.filter { $0.value == nil }.map(\.key)
      if !deleted.isEmpty {
        out.append(
          Statement(
            "DELETE FROM msglog.nodes AS n USING unnest($1::bytea[], $2::int8[]) AS d(stream, node) WHERE n.stream = d.stream AND n.node = d.node",
            [.byteas(deleted.map(\.stream.bytes)), .int64s(deleted.map(\.n))]))
      }
      if !ids.isEmpty {
        out.append(
          Statement(
            "INSERT INTO msglog.ids (id, entry) SELECT * FROM unnest($1::uuid[], $2::bytea[]) ON CONFLICT (id) DO UPDATE SET entry = EXCLUDED.entry",
            [.uuids(ids.keys.map { $0 }), .byteas(Array(ids.values))]))
      }
      if !checkpoints.isEmpty {
        out.append(
          Statement(
            "INSERT INTO msglog.checkpoints (stream, seq, body) SELECT * FROM unnest($1::bytea[], $2::int8[], $3::bytea[]) ON CONFLICT (stream, seq) DO UPDATE SET body = EXCLUDED.body",
            [
              .byteas(checkpoints.keys.map(\.stream.bytes)), .int64s(checkpoints.keys.map(\.n)),
              .byteas(Array(checkpoints.values)),
            ]))
      }
      if let summaryRow {
        out.append(
          Statement(
            "INSERT INTO msglog.meta (key, value) VALUES ('summary', $1) ON CONFLICT (key) DO UPDATE SET value = EXCLUDED.value",
            [.bytes(summaryRow)]))
      }
      if upgradesSchema, !upgradeSent {
        out.append(PostgresSchema.upgrade)
        upgradeSent = true
      }
      return out
    }

    private func clearBuffers() {
      events.removeAll(keepingCapacity: true)
      heads.removeAll()
      nodes.removeAll()
      ids.removeAll()
      checkpoints.removeAll()
      summaryRow = nil
      cleared = false
      dirty.removeAll()
    }

    /// Sends the buffered writes (one pipeline) so that the next read sees them.
    func flush() throws {
      guard writing, pending else { return }
      let batch = statements()
      clearBuffers()
      try connection.pipeline(batch)
    }

    /// Sends what is left, moves the head, notifies followers and commits: one round trip.
    func commit() throws {
      var batch = statements()
      clearBuffers()
      if let head {
        batch.append(Statement("UPDATE msglog.head SET seq = $1 WHERE id = 1", [.uint64(head)]))
        // Delivered to listeners when (and only if) the transaction commits.
        batch.append(Statement("SELECT pg_notify('msglog', $1)", [.text(String(head))]))
      }
      batch.append(Statement("COMMIT"))
      try connection.pipeline(batch)
    }
  }
}

/// Wakes a follower when any client commits: a connection of its own that
/// `LISTEN`s on msglog's channel; its socket becomes readable on a notification.
final class NotificationWatcher: CommitWatcher {
  let connection: Connection
  /// The location as messages show it.
  let shown: String

  init(conninfo: String, shown: String) throws {
    connection = try Connection(conninfo)
    self.shown = shown
    try connection.execute("LISTEN msglog")
  }

  var fileDescriptor: Int32 { connection.socket }

  func drain() throws {
    do {
      _ = try connection.notifications()
    } catch {
      throw MsglogError.connectionLost(location: shown, reason: error.message)
    }
  }
}
