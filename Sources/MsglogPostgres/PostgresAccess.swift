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
    /// The head seq: read (and perhaps locked) at the start of a write
    /// transaction, then moved by appends.
    private var head: UInt64?
    /// Whether this transaction holds the head row's lock. An optimistic
    /// write takes it with the first writes it sends (see `lockFirst`).
    private var locked: Bool
    /// The server's clock at the transaction's start, never earlier than
    /// the log's last event: the time of the events it appends.
    let commitTime: Timestamp?
    /// Whether any write was sent.
    private var wrote = false
    /// The head when the transaction opened: a commit that leaves it there
    /// appended nothing, and wakes no follower.
    private let openingHead: UInt64?

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

    /// A write on what this process knew (`KnownState`): no transaction is
    /// open until the first statement is sent, and the lock checks that the
    /// head is still the one known.
    private let known: Bool
    /// Whether the transaction's `BEGIN` has been sent.
    private var begun: Bool

    init(
      connection: Connection, store: PostgresStore, writing: Bool, head: UInt64? = nil, locked: Bool = true,
      serverTime: Timestamp? = nil
    ) {
      self.connection = connection
      self.store = store
      self.writing = writing
      self.head = head
      self.openingHead = head
      self.locked = locked
      self.commitTime = serverTime
      self.known = false
      self.begun = true
    }

    /// A write on what this process knows: validated against `state`,
    /// committed in one round trip when it reads nothing else.
    init(connection: Connection, store: PostgresStore, knowing state: KnownState) {
      self.connection = connection
      self.store = store
      writing = true
      head = state.head
      openingHead = state.head
      locked = false
      commitTime = state.time
      known = true
      begun = false
      cachedHeads = state.heads
      cachedLast = state.last
      cachedNodes = state.nodes
      knownVersion = state.headVersion
    }

    /// The head row's version (xmin) as the known state has it.
    private var knownVersion: String? = nil
    /// Whether this transaction sent the check that the head row is as the
    /// known state has it (a write on what was known that sends nothing
    /// checks nothing).
    private(set) var checkedKnown = false
    /// The head row's version once this transaction committed.
    private(set) var headVersion: String? = nil

    /// What this transaction leaves known, once it has committed: the head,
    /// and the heads, last events and nodes of the streams it read or
    /// wrote; nil after a rebuild (it read everything; nothing to keep).
    func knownAfterCommit(serverClock: Timestamp, readAt: ContinuousClock.Instant, lastTime: Timestamp)
      -> KnownState?
    {
      guard let head, let headVersion, !clearedOnce, cachedNodes.count <= KnownState.nodeLimit else { return nil }
      var time = lastTime
      if let record = lastAppended,
        let event = try? record.withUnsafeBytes({ try EventRecord.decode($0, verifyingChecksum: false) }),
        event.time > time
      {
        time = event.time
      }
      return KnownState(
        head: head, headVersion: headVersion, heads: cachedHeads, last: cachedLast, nodes: cachedNodes,
        lastTime: time, serverClock: serverClock, readAt: readAt)
    }

    /// The record of the last event appended, for the time the next must not fall behind.
    private var lastAppended: [UInt8]?
    /// Whether the derived tables were cleared (a rebuild).
    private var clearedOnce = false

    /// The statement a write opens with: the head seq (locked, or from the
    /// snapshot), the server's clock in milliseconds, the log's last record
    /// (whose time the clock must not fall behind) and whether the server
    /// is a standby (which refuses writes).
    static func headStatement(locking: Bool) -> Statement {
      Statement(
        "SELECT h.seq, floor(extract(epoch FROM clock_timestamp()) * 1000)::int8, e.record, pg_is_in_recovery() "
          + "FROM msglog.head h LEFT JOIN msglog.events e ON e.seq = h.seq WHERE h.id = 1"
          + (locking ? " FOR UPDATE OF h" : ""))
    }

    /// What `headStatement` found.
    struct Opening {
      var head: UInt64
      /// The events' time: the server's clock, never earlier than `lastTime`.
      var time: Timestamp
      /// The server's clock.
      var serverClock: Timestamp
      /// The time of the log's last event (0 for an empty log).
      var lastTime = Timestamp(milliseconds: 0)
      var inRecovery: Bool

      init(_ rows: Rows, shown: String) throws {
        guard let head = rows.uint64(0, 0), let now = rows.int64(0, 1) else {
          throw MsglogError.notAMsglogDatabase(location: shown, reason: "its msglog.head row is missing")
        }
        self.head = head
        inRecovery = rows.bool(0, 3) == true
        // Never earlier than the event before: times go forward with seqs,
        // whichever machine's commit came first.
        serverClock = Timestamp(milliseconds: now)
        if !rows.isNull(0, 2), let last = try? EventRecord.decode(rows.bytes(0, 2), verifyingChecksum: false) {
          lastTime = last.time
        }
        time = max(serverClock, lastTime)
      }
    }

    /// The lock an optimistic write takes in front of the first writes it
    /// sends: in a repeatable-read transaction it fails (could not
    /// serialize) if another writer committed after the snapshot, so that
    /// nothing is written on a state that moved.
    ///
    /// A write on what was known checks instead that the head is still the
    /// one known, dividing by zero if not (in any isolation: `FOR UPDATE`
    /// evaluates it on the row as locked).
    private func lockFirst(_ statements: [Statement]) -> [Statement] {
      guard !locked else { return statements }
      guard known, let openingHead, let knownVersion else {
        return [Statement("SELECT seq FROM msglog.head WHERE id = 1 FOR UPDATE")] + statements
      }
      checkedKnown = true
      // The row as the last write left it: its seq, and its version (xmin),
      // which any other write changes — a rebuild that leaves the seq too.
      return [
        Statement(
          "SELECT 1 / (seq = $1 AND xmin::text = $2)::int FROM msglog.head WHERE id = 1 FOR UPDATE",
          [.uint64(openingHead), .text(knownVersion)])
      ] + statements
    }

    /// `statements`, after the transaction's `BEGIN` if it has not been sent.
    private func begin(_ statements: [Statement]) -> [Statement] {
      begun ? statements : [Statement("BEGIN")] + statements
    }

    /// Runs a read of `table`, after sending what is buffered for it.
    private func query(_ table: Table, _ sql: String, _ parameters: [Parameter] = []) throws -> Rows {
      if cleared || dirty.contains(table) { try flush() }
      guard begun else {
        let rows = try connection.pipeline(begin([Statement(sql, parameters)]))
        begun = true
        return rows[1]
      }
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
        let node = try DerivedRows.decodeNode(id, of: stream, rows.bytes(row, 1))
        nodes[id] = node
        // A writer's path through the tree, for its next write (`KnownState`).
        if writing { cachedNodes[NodeKey(stream: stream, n: id)] = node }
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

    /// Counting a table's rows is a scan in PostgreSQL, too slow for every
    /// write: the database's own constraints (unique seqs, stream versions
    /// and inserted ids) guard the log instead.
    func tableCounts() throws -> TableCounts? { nil }

    /// Every table's rows counted, in one statement, for `verify`. The
    /// events table is its own per-stream index.
    func rowCounts() throws -> TableCounts? {
      let rows = try query(
        .events,
        "SELECT (SELECT count(*) FROM msglog.events), (SELECT count(*) FROM msglog.streams), "
          + "(SELECT count(*) FROM msglog.ids), (SELECT count(*) FROM msglog.nodes), "
          + "(SELECT count(*) FROM msglog.checkpoints)")
      let events = rows.uint64(0, 0) ?? 0
      return TableCounts(
        events: events, streamEvents: events, heads: rows.uint64(0, 1) ?? 0, ids: rows.uint64(0, 2) ?? 0,
        nodes: rows.uint64(0, 3) ?? 0, checkpoints: rows.uint64(0, 4) ?? 0)
    }

    // MARK: LogWriter

    func appendRecord(_ record: [UInt8], of event: Event) throws {
      precondition(writing, "a write in a read transaction")
      var inserted: ItemID? = nil
      if case .insert(let id, _, _, _) = event.op { inserted = id }
      let seq = event.seq
      events.append((seq, event.stream.bytes, event.version, inserted, record))
      cachedLast[event.stream] = (seq, record)
      lastAppended = record
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
      // What the row holds once the write is sent: a read of it needs no round trip.
      cachedNodes[NodeKey(stream: stream, n: id)] = node
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
      clearedOnce = true
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
      let batch = begin(lockFirst(statements()))
      clearBuffers()
      wrote = true
      try connection.pipeline(batch)
      begun = true
      locked = true
    }

    /// Sends what is left, moves the head, notifies followers and commits:
    /// one round trip, which also takes the head's lock if it is not held
    /// yet. A transaction that wrote nothing just ends.
    func commit() throws {
      var batch = statements()
      clearBuffers()
      var updateAt: Int? = nil
      if let head, wrote || !batch.isEmpty {
        batch = lockFirst(batch)
        updateAt = batch.count
        // Its xmin names this transaction's version of the row, for the next
        // write on what this one leaves known.
        batch.append(Statement("UPDATE msglog.head SET seq = $1 WHERE id = 1 RETURNING xmin::text", [.uint64(head)]))
        // Delivered to listeners when (and only if) the transaction commits:
        // once per transaction, however many events it appends.
        if head != openingHead {
          batch.append(Statement("SELECT pg_notify('msglog', $1)", [.text(String(head))]))
        }
      }
      guard begun || !batch.isEmpty else {  // nothing sent, nothing to end
        headVersion = knownVersion
        return
      }
      batch.append(Statement("COMMIT"))
      let sent = begin(batch)
      let rows = try connection.pipeline(sent)
      begun = true
      // The update's result, counted from the end (a BEGIN may have been put in front).
      if let updateAt {
        headVersion = rows[rows.count - (batch.count - updateAt)].text(0, 0)
      } else {
        headVersion = knownVersion
      }
    }
  }
}
