import MsglogCore

/// A bulk import's rows, table by table, copied into each table with
/// `COPY … FROM STDIN (FORMAT binary)` streamed as the import builds them
/// — instead of the ledger's statements of arrays, which the server
/// parses, unnests and upserts.
///
/// Under the head row's lock, taken before the first copy (the ordinary
/// way's check that no writer committed after the snapshot): all of it
/// commits with the stream heads, the summary and the head, or nothing
/// does. A read in the middle (the import meets a new stream) ends the
/// copy in progress, and the next row starts another. A row the tables'
/// constraints refuse — an id the log knows, a derived row already there —
/// ends the copy and fails the transaction, which is rolled back; the
/// import then goes the ledger's way (`BulkImport.Unfit`).
extension PostgresStore.Access: BulkLoading {
  func appendEvents(_ body: (_ append: (Event, UnsafeRawBufferPointer) throws -> Void) throws -> Void) throws {
    try copying(into: .events) {
      try body { event, record in
        try copyRow(into: .events) { rows in
          rows.int8(event.seq)
          event.stream.withBytes { rows.bytes($0) }
          rows.int8(event.version)
          if case .insert(let id, _, _, _) = event.op { rows.uuid(id) } else { rows.null() }
          rows.bytes(record)
        }
        state.head = event.seq
        try upgradeSchema(toHold: record)
      }
    }
  }

  /// The records alone do not name the columns the events table indexes:
  /// each is decoded for them (`appendEvents` is what a bulk import calls).
  func appendRecords(_ body: (_ append: (UInt64, UnsafeRawBufferPointer) throws -> Void) throws -> Void) throws {
    try appendEvents { append in
      try withoutActuallyEscaping(append) { append in
        try body { _, record in try append(EventRecord.decode(record, verifyingChecksum: false), record) }
      }
    }
  }

  func putAscending(
    _ table: BulkTable,
    _ body: (_ put: (_ key: UnsafeRawBufferPointer, _ value: UnsafeRawBufferPointer) throws -> Void) throws -> Void
  ) throws {
    switch table {
    case .streamEvents:
      // The events table is its own per-stream index here.
      try body { _, _ in }
    case .ids:
      try copying(into: .ids) {
        try body { key, value in
          try copyRow(into: .ids) { rows in
            rows.bytes(key)  // the id's 16 bytes: a uuid's binary form
            rows.bytes(value)
          }
        }
      }
    case .order, .checkpoints:
      // Keyed by stream and node id, or stream and seq (`DerivedRows.streamKey`).
      let target: PostgresSchema.CopyTable = table == .order ? .nodes : .checkpoints
      try copying(into: target) {
        try body { key, value in
          let split = key.count - 9  // the name, a 0, a big-endian u64
          precondition(split > 0 && key[split] == 0, "a stream key")
          try copyRow(into: target) { rows in
            rows.bytes(UnsafeRawBufferPointer(rebasing: key[..<split]))
            rows.int8(key.loadBigEndian(fromByteOffset: split + 1, as: UInt64.self))
            rows.bytes(value)
          }
        }
      }
    }
  }

  /// Builds the keys dropped for the load, now that every row is in: one
  /// round trip, after the last copy, so that what the import computes
  /// after its events (the trees, the id rows) is not waiting on them.
  func finishLoading() throws {
    let keys = buildingKeys()
    guard !keys.isEmpty else { return }
    do {
      try send(keys)
    } catch let error as PostgresError {
      throw Self.unfitIfDuplicate(error)
    }
  }

  /// Runs `body`, which copies rows into `table` (`copyRow`), and ends its
  /// copy; a failure abandons the copy, and a duplicate the tables refuse
  /// makes the import unfit. In the transaction that creates the schema,
  /// the table's keys are dropped first and built once all rows are in
  /// (`PostgresSchema.keys`, `finishLoading`).
  private func copying(into table: PostgresSchema.CopyTable, _ body: () throws -> Void) throws {
    do {
      if state.createsSchema, let keys = PostgresSchema.keys[table], !keysToBuild.contains(table) {
        try send(keys.drop)
        keysToBuild.append(table)
      }
      try body()
      try endCopy()
    } catch {
      copy?.rows.abandon()
      copy = nil
      throw (error as? PostgresError).map(Self.unfitIfDuplicate) ?? error
    }
  }

  /// Sends `statements` under the head row's lock, after the writes buffered so far.
  private func send(_ statements: [Statement]) throws {
    try endCopy()
    try send(buffer.take() + statements, locking: true)
  }

  /// Adds a row to the copy into `table`, starting one (under the head
  /// row's lock, after the writes buffered so far) if none is in progress.
  private func copyRow(into table: PostgresSchema.CopyTable, _ fields: (inout CopyRows) -> Void) throws {
    if copy?.table != table {
      try endCopy()
      // What the transaction knew of streams no longer follows its rows.
      cache.forget()
      try lock()
      copy = (table, try connection.startCopy(PostgresSchema.copy(into: table)))
    }
    do {
      try copy!.rows.row(table.columns)
    } catch {
      throw Self.unfitIfDuplicate(error)
    }
    fields(&copy!.rows)
  }

  /// Ends the copy in progress, if any.
  func endCopy() throws {
    guard copy != nil else { return }
    defer { copy = nil }
    do {
      try copy!.rows.finish()
    } catch {
      throw Self.unfitIfDuplicate(error)
    }
  }

  /// A copy's failure: a duplicate the tables refuse makes the import unfit.
  static func unfitIfDuplicate(_ error: PostgresError) -> any Error {
    error.sqlState == PostgresError.uniqueViolation ? BulkImport.Unfit() : error
  }
}

extension PostgresStore.Access {
  /// The statements that build the keys a bulk load dropped (none are
  /// left to build afterwards).
  func buildingKeys() -> [Statement] {
    guard !keysToBuild.isEmpty else { return [] }
    defer { keysToBuild.removeAll() }
    return [PostgresSchema.keyBuildMemory] + keysToBuild.flatMap { PostgresSchema.keys[$0]!.add }
  }
}
