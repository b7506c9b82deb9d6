import MsglogCore

extension PostgresStore {
  /// A write transaction's changes not sent yet, by table, and the
  /// statements that send them: one per table and kind, each column an
  /// array. A row written twice is sent once, as it was last written.
  struct WriteBuffer {
    enum Table { case events, streams, nodes, ids, checkpoints, meta }

    private var events: [(seq: UInt64, stream: [UInt8], version: UInt64, inserted: ItemID?, record: [UInt8])] = []
    private var heads: [StreamName: (root: NodeID, row: [UInt8])] = [:]
    /// nil: deleted.
    private var nodes: [NodeKey: [UInt8]?] = [:]
    private var ids: [ItemID: [UInt8]] = [:]
    private var checkpoints: [NodeKey: [UInt8]] = [:]
    private var summary: [UInt8]? = nil
    /// Whether the derived tables are to be emptied first (a rebuild).
    private var clears = false
    /// The schema version this transaction moves the schema to (sent once).
    private(set) var schemaUpgrade: Int? = nil
    private var upgradeSent = false
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

    /// Moves the schema to `version` with the next statements sent.
    mutating func upgradeSchema(to version: Int) {
      guard schemaUpgrade == nil else { return }
      schemaUpgrade = version
      dirty.insert(.meta)
    }

    /// The buffered writes as statements, in table order; the buffer is
    /// empty afterwards.
    mutating func take() -> [Statement] {
      var out: [Statement] = []
      if clears { out += PostgresSchema.clearDerived }
      if !events.isEmpty {
        out.append(
          PostgresSchema.insertEvents(
            seqs: events.map(\.seq), streams: events.map(\.stream), versions: events.map(\.version),
            inserted: events.map(\.inserted), records: events.map(\.record)))
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
      if let schemaUpgrade, !upgradeSent {
        out.append(PostgresSchema.upgrade(to: schemaUpgrade))
        upgradeSent = true
      }
      events.removeAll(keepingCapacity: true)
      heads.removeAll()
      nodes.removeAll()
      ids.removeAll()
      checkpoints.removeAll()
      summary = nil
      clears = false
      dirty.removeAll()
      return out
    }
  }
}
