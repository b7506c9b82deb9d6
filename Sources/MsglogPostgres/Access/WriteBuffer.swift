import MsglogCore

extension PostgresStore {
  /// A write transaction's changes not sent yet, by table, and the
  /// statements that send them: one per table and kind, each column an
  /// array. A row written twice is sent once, as it was last written.
  struct WriteBuffer {
    enum Table { case events, streams, nodes, ids, checkpoints, meta, sync }

    private var events: [(seq: UInt64, stream: [UInt8], version: UInt64, inserted: ItemID?, record: [UInt8])] = []
    /// Records an erase wrote again (blanked), by seq: sent after the
    /// appended ones, which may include them.
    private var replaced: [UInt64: [UInt8]] = [:]
    private var heads: [StreamName: (root: NodeID, row: [UInt8])] = [:]
    /// nil: deleted.
    private var nodes: [NodeKey: [UInt8]?] = [:]
    private var ids: [ItemID: [UInt8]] = [:]
    private var checkpoints: [NodeKey: [UInt8]] = [:]
    private var summary: [UInt8]? = nil
    private var done: [ItemID: [UInt8]] = [:]
    private var outcomes: [(replica: ItemID, change: UInt64, row: [UInt8])] = []
    private var forgotten: [(replica: ItemID, range: Range<UInt64>)] = []
    private var logID: ItemID? = nil
    /// Named tokens' rows by id (`Access+Tokens`).
    private var tokens: [String: [UInt8]] = [:]
    private var owners: [ItemID: [UInt8]] = [:]
    /// Whether the derived tables are to be emptied first (a rebuild).
    private var clears = false
    /// The schema version this transaction moves the schema to (sent once).
    private(set) var schemaUpgrade: Int? = nil
    private var upgradeSent = false
    /// The tables' version this transaction brings up to this msglog's (sent once).
    private(set) var tablesUpgrade: Int? = nil
    private var tablesSent = false
    /// The tables with buffered writes: a read of another need not wait for them.
    private var dirty: Set<Table> = []

    /// Whether nothing waits to be sent.
    var isEmpty: Bool { dirty.isEmpty && !clears }

    /// Whether a read of `table` must wait until what is buffered is sent.
    func holds(_ table: Table) -> Bool { clears || dirty.contains(table) }

    mutating func append(seq: UInt64, stream: [UInt8], version: UInt64, inserted: ItemID?, record: [UInt8]) {
      events.append((seq, stream, version, inserted, record))
      dirty.insert(.events)
    }

    mutating func replace(seq: UInt64, record: [UInt8]) {
      replaced[seq] = record
      dirty.insert(.events)
    }

    mutating func put(_ head: StreamHead) {
      heads[head.stream] = (head.root, DerivedRows.encode(head))
      dirty.insert(.streams)
    }

    mutating func put(_ node: TreeNode<Slot>, id: NodeID, of stream: StreamName) {
      nodes[NodeKey(stream: stream, n: id)] = DerivedRows.encode(node, id: id, of: stream)
      dirty.insert(.nodes)
    }

    mutating func deleteNode(_ id: NodeID, of stream: StreamName) {
      nodes[NodeKey(stream: stream, n: id)] = .some(nil)
      dirty.insert(.nodes)
    }

    mutating func put(_ entry: IdEntry, for id: ItemID) {
      ids[id] = DerivedRows.encode(entry, for: id)
      dirty.insert(.ids)
    }

    mutating func put(_ checkpoint: Checkpoint) {
      checkpoints[NodeKey(stream: checkpoint.stream, n: checkpoint.seq)] = DerivedRows.encode(checkpoint)
      dirty.insert(.checkpoints)
    }

    mutating func put(_ summary: RecordedCounts) {
      self.summary = DerivedRows.encode(summary)
      dirty.insert(.meta)
    }

    /// Drops the derived rows buffered so far and empties the tables first.
    mutating func clearDerived() {
      heads.removeAll()
      nodes.removeAll()
      ids.removeAll()
      checkpoints.removeAll()
      summary = nil
      clears = true
    }

    /// Moves the schema on to `version` with the next statements sent
    /// (the newest asked for, however many records ask).
    mutating func upgradeSchema(to version: Int) {
      if let schemaUpgrade, schemaUpgrade >= version { return }
      schemaUpgrade = version
      upgradeSent = false
      dirty.insert(.meta)
    }

    /// Brings tables at `version` up to this msglog's with the next
    /// statements sent, before any row goes into them.
    mutating func upgradeTables(from version: Int) {
      guard tablesUpgrade == nil, version < PostgresSchema.tablesVersion else { return }
      tablesUpgrade = version
      dirty.formUnion([.meta, .sync])
    }

    mutating func putProgress(_ row: [UInt8], of replica: ItemID) {
      done[replica] = row
      dirty.insert(.sync)
    }

    mutating func forgetUnappliedOutcomes(by replica: ItemID, in range: Range<UInt64>) {
      forgotten.append((replica, range))
      dirty.insert(.sync)
    }

    mutating func putOutcome(_ row: [UInt8], ofChange change: UInt64, by replica: ItemID) {
      outcomes.append((replica, change, row))
      dirty.insert(.sync)
    }

    mutating func putToken(_ row: [UInt8], id: String) {
      tokens[id] = row
      dirty.insert(.meta)
    }

    mutating func putReplicaOwner(_ row: [UInt8], of replica: ItemID) {
      owners[replica] = row
      dirty.insert(.meta)
    }

    /// Gives the log this id unless it has one.
    mutating func giveLogID(_ id: ItemID) {
      logID = id
      dirty.insert(.meta)
    }

    /// The buffered writes as statements, in table order; the buffer is
    /// empty afterwards.
    mutating func take() -> [Statement] {
      var out: [Statement] = []
      if clears { out += PostgresSchema.clearDerived }
      // First: the tables this msglog adds, before any row goes into them.
      if let tablesUpgrade, !tablesSent {
        out += PostgresSchema.upgradeTables(from: tablesUpgrade)
        tablesSent = true
      }
      if let schemaUpgrade, !upgradeSent {
        out.append(PostgresSchema.upgrade(to: schemaUpgrade))
        upgradeSent = true
      }
      if !events.isEmpty {
        out.append(
          PostgresSchema.insertEvents(
            seqs: events.map(\.seq), streams: events.map(\.stream), versions: events.map(\.version),
            inserted: events.map(\.inserted), records: events.map(\.record)))
      }
      if !replaced.isEmpty {
        out.append(PostgresSchema.replaceRecords(seqs: Array(replaced.keys), records: Array(replaced.values)))
      }
      if !heads.isEmpty {
        out.append(
          PostgresSchema.putStreamHeads(
            streams: heads.keys.map(\.bytes), roots: heads.values.map(\.root), rows: heads.values.map(\.row)))
      }
      let written = nodes.compactMap { key, body in body.map { (key, $0) } }
      if !written.isEmpty {
        out.append(
          PostgresSchema.putNodes(
            streams: written.map(\.0.stream.bytes), nodes: written.map(\.0.n), bodies: written.map(\.1)))
      }
      let deleted = nodes.filter { $0.value == nil }.map(\.key)
      if !deleted.isEmpty {
        out.append(PostgresSchema.deleteNodes(streams: deleted.map(\.stream.bytes), nodes: deleted.map(\.n)))
      }
      if !ids.isEmpty {
        out.append(PostgresSchema.putIdEntries(ids: Array(ids.keys), entries: Array(ids.values)))
      }
      if !checkpoints.isEmpty {
        out.append(
          PostgresSchema.putCheckpoints(
            streams: checkpoints.keys.map(\.stream.bytes), seqs: checkpoints.keys.map(\.n),
            bodies: Array(checkpoints.values)))
      }
      if let summary { out.append(PostgresSchema.putSummary(summary)) }
      if let logID { out.append(PostgresSchema.giveLogID(logID)) }
      if !done.isEmpty {
        out.append(PostgresSchema.putProgress(replicas: Array(done.keys), rows: Array(done.values)))
      }
      for (replica, range) in forgotten {
        out.append(
          PostgresSchema.forgetUnappliedOutcomes(by: replica, from: range.lowerBound, below: range.upperBound))
      }
      if !outcomes.isEmpty {
        out.append(
          PostgresSchema.putOutcomes(
            replicas: outcomes.map(\.replica), changes: outcomes.map(\.change), outcomes: outcomes.map(\.row)))
      }
      if !tokens.isEmpty {
        out.append(PostgresSchema.putTokens(ids: Array(tokens.keys), rows: Array(tokens.values)))
      }
      if !owners.isEmpty {
        out.append(PostgresSchema.putReplicaOwners(replicas: Array(owners.keys), rows: Array(owners.values)))
      }
      if !outcomes.isEmpty || !forgotten.isEmpty || !tokens.isEmpty { out.append(PostgresSchema.touchHead) }
      events.removeAll(keepingCapacity: true)
      replaced.removeAll()
      heads.removeAll()
      nodes.removeAll()
      ids.removeAll()
      checkpoints.removeAll()
      summary = nil
      done.removeAll()
      outcomes.removeAll()
      forgotten.removeAll()
      logID = nil
      tokens.removeAll()
      owners.removeAll()
      clears = false
      dirty.removeAll()
      return out
    }
  }
}
