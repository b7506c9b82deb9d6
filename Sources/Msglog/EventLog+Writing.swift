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
          command: .insert(InsertRequest(index: overflow ? .max : at, text: item.text, sender: item.sender, id: item.id)))
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
