extension EventLog {
  /// Appends a message at the end of the stream.
  @discardableResult
  public func append(
    _ text: String, sender: String? = nil, id: ItemID? = nil, to stream: StreamName = .main,
    expectVersion: UInt64? = nil
  ) throws -> Outcome {
    try append(contentsOf: [NewItem(text, sender: sender, id: id)], to: stream, expectVersion: expectVersion)[0]
  }

  /// Inserts a message so that it ends at `index` (0…count).
  @discardableResult
  public func insert(
    _ text: String, at index: Int, sender: String? = nil, id: ItemID? = nil, into stream: StreamName = .main,
    expectVersion: UInt64? = nil
  ) throws -> Outcome {
    try insert(
      contentsOf: [NewItem(text, sender: sender, id: id)], at: index, into: stream, expectVersion: expectVersion)[0]
  }

  /// Appends messages in order, all in one transaction.
  @discardableResult
  public func append(
    contentsOf items: [NewItem], to stream: StreamName = .main, expectVersion: UInt64? = nil,
    progress: ((Int, Int) -> Void)? = nil
  ) throws -> [Outcome] {
    try perform(
      items.map {
        WriteRequest(stream: stream, command: .insert(InsertRequest(text: $0.text, sender: $0.sender, id: $0.id)))
      },
      expectVersion: expectVersion, progress: progress
    ).map { $0! }
  }

  /// Inserts messages at `index`, `index + 1`, …, all in one transaction.
  @discardableResult
  public func insert(
    contentsOf items: [NewItem], at index: Int, into stream: StreamName = .main, expectVersion: UInt64? = nil,
    progress: ((Int, Int) -> Void)? = nil
  ) throws -> [Outcome] {
    try perform(
      items.enumerated().map { offset, item in
        // Past Int.max is out of range, and refused as such.
        let (at, overflow) = index.addingReportingOverflow(offset)
        return WriteRequest(
          stream: stream,
          command: .insert(
            InsertRequest(index: overflow ? .max : at, text: item.text, sender: item.sender, id: item.id)))
      }, expectVersion: expectVersion, progress: progress
    ).map { $0! }
  }

  /// Moves the item at `from` so that it ends at `to`; nil (and nothing
  /// appended) when `from == to`.
  @discardableResult
  public func move(from: Int, to: Int, in stream: StreamName = .main, expectVersion: UInt64? = nil)
    throws -> Outcome?
  {
    try perform(
      [WriteRequest(stream: stream, command: .move(from: from, to: to, id: nil))], expectVersion: expectVersion)[0]
  }

  /// Removes a live item, named by its id or a unique prefix of 8+ characters.
  @discardableResult
  public func remove(_ item: ItemSelector, from stream: StreamName = .main, expectVersion: UInt64? = nil)
    throws -> Outcome
  {
    try perform([WriteRequest(stream: stream, command: .remove(item))], expectVersion: expectVersion)[0]!
  }

  /// Removes the live item with this id.
  @discardableResult
  public func remove(id: ItemID, from stream: StreamName = .main, expectVersion: UInt64? = nil)
    throws -> Outcome
  {
    try remove(.id(id), from: stream, expectVersion: expectVersion)
  }

  /// Validates and appends `requests` in one write transaction: all or none.
  ///
  /// Calls from many threads at once are committed together (see
  /// `CommitQueue`): a call that arrives while another's transaction is in
  /// flight waits, and the next transaction takes every call that waited,
  /// validating each against the state the ones before it left. Each call
  /// keeps its own outcome, and a refused call refuses only itself. A large
  /// batch (an import, many lines) runs in a transaction of its own.
  ///
  /// - Parameters:
  ///   - requests: the commands, each with its stream, in the order they apply.
  ///   - expectVersion: refuse unless the first request's stream is at this version.
  ///   - lineNumbers: when given, a refused request's error names its line.
  ///   - progress: called now and then with (done, total).
  /// - Returns: one outcome per request; nil for a move onto itself.
  public func perform(
    _ requests: [WriteRequest], expectVersion: UInt64? = nil, lineNumbers: [Int]? = nil,
    progress: ((Int, Int) -> Void)? = nil
  ) throws -> [Outcome?] {
    guard !requests.isEmpty else { return [] }
    guard requests.count <= Self.groupedRequests, lineNumbers == nil, progress == nil else {
      return try performAlone(requests, expectVersion: expectVersion, lineNumbers: lineNumbers, progress: progress)
    }
    return try commits.submit(PendingWrite(requests: requests, expectVersion: expectVersion)) { batch in
      try commit(batch)
    }
  }

  /// A call with at most this many requests may share its transaction.
  static let groupedRequests = 64

  /// Commits the calls of a batch in one transaction, each with its own
  /// outcome. A call refused there is taken back (`LedgerSession.rewind`)
  /// and the others go on; if one could not be taken back (it had written
  /// something), the transaction is abandoned and each call runs alone.
  func commit(_ batch: [CommitQueue<PendingWrite, [Outcome?]>.Ticket]) throws {
    guard batch.count > 1 else {
      let work = batch[0].work
      batch[0].result = Result { try performAlone(work.requests, expectVersion: work.expectVersion) }
      return
    }
    var streams: [StreamName] = []
    for ticket in batch {
      for request in ticket.work.requests where !streams.contains(request.stream) { streams.append(request.stream) }
    }
    // Set when a refused call cannot be taken back: the transaction is
    // abandoned (what that throws is worded as a store's on the way out).
    let abandoned = Flag()
    let results: [Result<[Outcome?], any Error>]
    do {
      results = try write(touching: streams.count > 8 ? [] : streams) { session in
        try batch.map { ticket in try perform(ticket.work, sharing: session, abandoned: abandoned) }
      }
    } catch {
      guard abandoned.isSet else { throw error }
      for ticket in batch {
        let work = ticket.work
        ticket.result = Result { try performAlone(work.requests, expectVersion: work.expectVersion) }
      }
      return
    }
    for (ticket, result) in zip(batch, results) { ticket.result = result }
  }

  /// One call's requests in a session shared with other calls, taken back
  /// when refused. A refusal, or damage found on this call's way (its own),
  /// is this call's outcome; the store's own failures (a map to grow, a head
  /// that moved, a lost server) are the whole transaction's, and so is a
  /// refusal that cannot be taken back (`abandoned` then set).
  private func perform(_ work: PendingWrite, sharing session: LedgerSession, abandoned: Flag) throws -> Result<
    [Outcome?], any Error
  > {
    let mark = session.mark()
    do {
      return .success(try perform(work, in: session))
    } catch let error where error is MsglogError || error is DerivedDamage {
      guard session.rewind(to: mark) else {
        abandoned.isSet = true
        throw error
      }
      return .failure(MsglogError(anyStoreFailure: error))
    }
  }

  /// One call's requests, in a session shared with other calls.
  private func perform(_ work: PendingWrite, in session: LedgerSession) throws -> [Outcome?] {
    if let expectVersion = work.expectVersion {
      try session.expect(version: expectVersion, of: work.requests[0].stream)
    }
    if work.requests.count > 1 { try session.prefetch(idsOf: work.requests) }
    return try work.requests.map { try session.perform($0) }
  }

  /// Whether a batch was abandoned, set inside the transaction's closure.
  private final class Flag {
    var isSet = false
  }

  /// `perform` in a transaction of its own.
  func performAlone(
    _ requests: [WriteRequest], expectVersion: UInt64?, lineNumbers: [Int]? = nil,
    progress: ((Int, Int) -> Void)? = nil
  ) throws -> [Outcome?] {
    // Records plus derived rows: a generous estimate is free (the map is address space).
    let estimate =
      requests.count > 1
      ? requests.reduce(0) { total, request in
        if case .insert(let insert) = request.command { return total + 2 * insert.text.utf8.count + 512 }
        return total + 256
      } : 0
    // The streams a small batch touches, for a store to fetch up front.
    var streams: [StreamName] = []
    for request in requests where !streams.contains(request.stream) {
      streams.append(request.stream)
      if streams.count > 8 { break }
    }
    return try write(reserving: estimate, touching: streams.count > 8 ? [] : streams) { session in
      if let expectVersion { try session.expect(version: expectVersion, of: requests[0].stream) }
      var outcomes: [Outcome?] = []
      outcomes.reserveCapacity(requests.count)
      for (i, request) in requests.enumerated() {
        if i % 1024 == 0 { progress?(i, requests.count) }
        // Write the derived rows so far into the same transaction now and
        // then, so that a huge batch holds bounded state in memory.
        if i % LedgerSession.flushInterval == 0 {
          if i > 0 { try session.finish() }
          try session.prefetch(idsOf: requests[i..<min(i + LedgerSession.flushInterval, requests.count)])
        }
        do {
          outcomes.append(try session.perform(request))
        } catch let error as MsglogError where lineNumbers != nil {
          throw MsglogError.line(lineNumbers![i], error)
        }
      }
      progress?(requests.count, requests.count)
      return outcomes
    }
  }

  /// The requests of import lines, with the number of the line each came
  /// from (blank lines are skipped, and count).
  static func readImportLines(_ body: UnsafeRawBufferPointer, defaultStream: StreamName) throws(MsglogError) -> (
    [WriteRequest], [Int]
  ) {
    var requests: [WriteRequest] = []
    var lineNumbers: [Int] = []
    var reader = ImportLine.Reader(defaultStream: defaultStream)
    var number = 0
    var start = 0
    while start < body.count {
      let end = body[start...].firstIndex(of: 0x0A) ?? body.count
      number += 1
      let line = UnsafeRawBufferPointer(rebasing: body[start..<end])
      start = end + 1
      if line.allSatisfy({ $0 == 0x20 || $0 == 0x09 || $0 == 0x0D }) { continue }
      do {
        requests.append(try reader.parse(line))
        lineNumbers.append(number)
      } catch {
        throw MsglogError.line(number, error)
      }
    }
    return (requests, lineNumbers)
  }

  /// Applies import lines (JSON, one object per line; see docs/REFERENCE.md)
  /// atomically: a malformed or refused line throws `.line(n, error)` and
  /// nothing is written. A UTF-8 byte-order mark and blank lines are skipped.
  public func importLines(
    _ input: [UInt8], defaultStream: StreamName = .main, progress: ((Int, Int) -> Void)? = nil
  ) throws -> ImportResult {
    let parsed = input.withUnsafeBytes { all in
      Result { () throws(MsglogError) in
        try Self.readImportLines(
          input.starts(with: [0xEF, 0xBB, 0xBF]) ? UnsafeRawBufferPointer(rebasing: all.dropFirst(3)) : all,
          defaultStream: defaultStream)
      }
    }
    let (requests, lineNumbers) = try parsed.get()
    let outcomes = try perform(requests, lineNumbers: lineNumbers, progress: progress)
    let appended = outcomes.compactMap { $0 }
    // Nothing appended (no lines, or only moves onto themselves): the head is where it was.
    let head = appended.last?.event.seq ?? (try? headSeq()) ?? 0
    return ImportResult(imported: appended.count, head: head)
  }
}
