import MsglogCore

/// `LogWriter`: every change goes into the write buffer, and into the
/// cache where a later read of it would otherwise cost a round trip.
extension PostgresStore.Access {
  func appendRecord(_ record: [UInt8], of event: Event) throws {
    precondition(writing, "a write in a read transaction")
    var inserted: ItemID? = nil
    if case .insert(let id, _, _, _) = event.op { inserted = id }
    buffer.append(
      seq: event.seq, stream: event.stream.bytes, version: event.version, inserted: inserted, record: record)
    cache.last[event.stream] = (event.seq, record)
    lastAppended = record
    state.head = event.seq
    try record.withUnsafeBytes { try upgradeSchema(toHold: $0) }
  }

  func replaceRecord(_ record: [UInt8], of event: Event) throws {
    precondition(writing, "a write in a read transaction")
    if event.seq > (try headSeq()) {
      // Past the head there is no row to replace: a base's text, seeded
      // below the horizon by an import of a trimmed log's export.
      var inserted: ItemID? = nil
      if case .insert(let id, _, _, _) = event.op { inserted = id }
      buffer.append(
        seq: event.seq, stream: event.stream.bytes, version: PostgresSchema.seededVersion(event.seq),
        inserted: inserted, record: record)
      // Not an event of the stream's walk, which starts at the horizon
      // (put with the bases, after these): the stream has none yet.
      if cache.last[event.stream] == nil { cache.last[event.stream] = .some(nil) }
      try record.withUnsafeBytes { try upgradeSchema(toHold: $0) }
      return
    }
    buffer.replace(seq: event.seq, record: record)
    if case .some(.some(let last)) = cache.last[event.stream], last.seq == event.seq {
      cache.last[event.stream] = (event.seq, record)
    }
  }

  /// Moves the schema on with this transaction when `record` needs it
  /// (`ContainerFormat`'s rule); to 3, sync's tables are made sure of first.
  func upgradeSchema(toHold record: UnsafeRawBufferPointer) throws {
    if let target = PostgresSchema.format.upgrade(appending: record, at: store.schemaVersion) {
      if target >= PostgresSchema.syncTablesVersion { try makeSureOfSyncTables() }
      buffer.upgradeSchema(to: target)
    }
  }

  func putStreamHead(_ head: StreamHead) throws {
    buffer.put(head)
    cache.heads[head.stream] = head
  }

  func putOrderNode(_ node: TreeNode<Slot>, id: NodeID, of stream: StreamName) throws {
    buffer.put(node, id: id, of: stream)
    // What the row holds once the write is sent: a read of it needs no round trip.
    cache.nodes[PostgresStore.NodeKey(stream: stream, n: id)] = node
  }

  func deleteOrderNode(_ id: NodeID, of stream: StreamName) throws {
    buffer.deleteNode(id, of: stream)
    cache.nodes[PostgresStore.NodeKey(stream: stream, n: id)] = nil
  }

  func putIdEntry(_ entry: IdEntry, for id: ItemID) throws { buffer.put(entry, for: id) }

  /// `msglog.events` holds each inserted id once (a unique column).
  var enforcesUniqueInsertedIDs: Bool { true }

  /// Each read is a round trip: batches fetch their id rows at once.
  var prefersBatchedReads: Bool { true }

  /// The events table is its own per-stream index here.
  func putStreamEvent(_ seq: UInt64, of stream: StreamName) throws {}

  func putCheckpoint(_ checkpoint: Checkpoint) throws { buffer.put(checkpoint) }

  func putSummary(_ summary: RecordedCounts) throws { buffer.put(summary) }

  func clearDerived() throws {
    cache.forget()
    buffer.clearDerived()
  }
}
