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
  ///
  /// With `rebase`, `index` is one of the list at version `expectVersion`,
  /// and when the stream has moved on since, the message goes right after
  /// the item that was before that index there, or the first one before it
  /// still live (`Outcome.rebased`).
  @discardableResult
  public func insert(
    _ text: String, at index: Int, sender: String? = nil, id: ItemID? = nil, into stream: StreamName = .main,
    expectVersion: UInt64? = nil, rebase: Bool = false
  ) throws -> Outcome {
    try insert(
      contentsOf: [NewItem(text, sender: sender, id: id)], at: index, into: stream, expectVersion: expectVersion,
      rebase: rebase)[0]
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

  /// Inserts messages at `index`, `index + 1`, …, all in one transaction
  /// (with `rebase`, at the rebased index of the first and after it).
  @discardableResult
  public func insert(
    contentsOf items: [NewItem], at index: Int, into stream: StreamName = .main, expectVersion: UInt64? = nil,
    rebase: Bool = false, progress: ((Int, Int) -> Void)? = nil
  ) throws -> [Outcome] {
    try perform(
      items.enumerated().map { offset, item in
        // Past Int.max is out of range, and refused as such.
        let (at, overflow) = index.addingReportingOverflow(offset)
        return WriteRequest(
          stream: stream,
          command: .insert(
            InsertRequest(index: overflow ? .max : at, text: item.text, sender: item.sender, id: item.id)))
      }, expectVersion: expectVersion, rebase: rebase, progress: progress
    ).map { $0! }
  }

  /// Moves the item at `from` so that it ends at `to`; nil (and nothing
  /// appended) when `from == to`.
  ///
  /// With `rebase`, `from` and `to` are indices of the list at version
  /// `expectVersion`, and when the stream has moved on since, the item that
  /// was at `from` there goes right after the item it followed at `to`
  /// there, or the first one before that still live: where its user meant.
  @discardableResult
  public func move(
    from: Int, to: Int, in stream: StreamName = .main, expectVersion: UInt64? = nil, rebase: Bool = false
  ) throws -> Outcome? {
    try perform(
      [WriteRequest(stream: stream, command: .move(from: from, to: to, id: nil))], expectVersion: expectVersion,
      rebase: rebase)[0]
  }

  /// Removes a live item, named by its id or a unique prefix of 8+ characters.
  /// With `rebase`, a stream that moved past `expectVersion` is no conflict:
  /// the item is named by id.
  @discardableResult
  public func remove(
    _ item: ItemSelector, from stream: StreamName = .main, expectVersion: UInt64? = nil, rebase: Bool = false
  ) throws -> Outcome {
    try perform([WriteRequest(stream: stream, command: .remove(item))], expectVersion: expectVersion, rebase: rebase)[
      0]!
  }

  /// Removes the live item with this id.
  @discardableResult
  public func remove(id: ItemID, from stream: StreamName = .main, expectVersion: UInt64? = nil, rebase: Bool = false)
    throws -> Outcome
  {
    try remove(.id(id), from: stream, expectVersion: expectVersion, rebase: rebase)
  }

  /// Gives a live item new text; its place, author, time and seq stay, and
  /// it shows when it was edited. `sender` is who edited. Nil (and nothing
  /// appended) when the item has this text already. With `rebase`, as `remove`.
  @discardableResult
  public func edit(
    _ item: ItemSelector, text: String, sender: String? = nil, in stream: StreamName = .main,
    expectVersion: UInt64? = nil, rebase: Bool = false
  ) throws -> Outcome? {
    try perform(
      [WriteRequest(stream: stream, command: .edit(item, text: text, sender: sender))], expectVersion: expectVersion,
      rebase: rebase)[0]
  }

  /// Brings a removed item back with its id, text, author, time and seq: at
  /// `index` (0…count), or when nil right after its predecessor — the first
  /// item before it, in the list as it was just before its removal, that is
  /// still live (at 0 when none is). `item`: its id, or a unique prefix among
  /// the stream's removed items.
  @discardableResult
  public func restore(
    _ item: ItemSelector, at index: Int? = nil, in stream: StreamName = .main, expectVersion: UInt64? = nil
  ) throws -> Outcome {
    try perform(
      [WriteRequest(stream: stream, command: .restore(item, index: index))], expectVersion: expectVersion)[0]!
  }

  /// Appends the event that undoes event `seq` of the stream, with `undoes`
  /// set: an insert's or a restore's undoing is a remove, a remove's a
  /// restore after its predecessor, an edit's an edit back to the text
  /// before it, a move's a move back after its predecessor. Undoing an undo
  /// redoes. Without `seq`, the stream's latest event that is not an undo,
  /// is not undone, and whose undoing applies and changes something.
  ///
  /// Nil (and nothing appended) when the undoing changes nothing (the item
  /// is where, or says what, it was). Throws `alreadyUndone` (naming the
  /// undoer), `itemRemoved`/`itemIsLive` when the undoing cannot apply,
  /// `nothingToUndo`.
  @discardableResult
  public func undo(_ seq: UInt64? = nil, in stream: StreamName = .main, expectVersion: UInt64? = nil) throws
    -> Outcome?
  {
    try perform([WriteRequest(stream: stream, command: .undo(seq: seq))], expectVersion: expectVersion)[0]
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
  ///   - rebase: instead of refusing when the stream has moved past
  ///     `expectVersion`, transform the first request to the head (an insert
  ///     or a move by the predecessor rule; later inserts of the batch follow
  ///     it). Needs `expectVersion`.
  ///   - lineNumbers: when given, a refused request's error names its line.
  ///   - progress: called now and then with (done, total).
  /// - Returns: one outcome per request; nil for one that changes nothing
  ///   (a move onto itself, an edit to the same text, an undo in effect).
  public func perform(
    _ requests: [WriteRequest], expectVersion: UInt64? = nil, rebase: Bool = false, lineNumbers: [Int]? = nil,
    progress: ((Int, Int) -> Void)? = nil
  ) throws -> [Outcome?] {
    guard !requests.isEmpty else { return [] }
    if rebase, expectVersion == nil { throw MsglogError.invalidInput(.rebaseWithoutVersion) }
    let work = PendingWrite(requests: requests, expectVersion: expectVersion, rebase: rebase)
    guard requests.count <= Self.groupedRequests, lineNumbers == nil, progress == nil else {
      return try performAlone(work, lineNumbers: lineNumbers, progress: progress)
    }
    return try commits.submit(work) { batch in
      guard let observer = commitObservers.observer else { return try commit(batch) }
      let started = ContinuousClock.now
      defer {
        var events = 0
        for ticket in batch { events += (try? ticket.result?.get())?.reduce(0) { $0 + ($1 == nil ? 0 : 1) } ?? 0 }
        observer.committed(writes: batch.count, events: events, duration: ContinuousClock.now - started)
      }
      try commit(batch)
    }
  }

  /// `perform` in a transaction of its own.
  func performAlone(_ work: PendingWrite, lineNumbers: [Int]? = nil, progress: ((Int, Int) -> Void)? = nil) throws
    -> [Outcome?]
  {
    let requests = work.requests
    let estimate = requests.count > 1 ? Self.estimatedBytes(of: requests) : 0
    // The streams a small batch touches, for a store to fetch up front.
    var streams: [StreamName] = []
    for request in requests where !streams.contains(request.stream) {
      streams.append(request.stream)
      if streams.count > 8 { break }
    }
    return try write(reserving: estimate, touching: streams.count > 8 ? [] : streams) { session in
      try apply(work, in: session, lineNumbers: lineNumbers, progress: progress)
    }
  }

  /// Validates and performs one call's requests in `session` (a transaction
  /// of their own, or one shared with other calls by group commit).
  func apply(
    _ work: PendingWrite, in session: LedgerSession, lineNumbers: [Int]? = nil, progress: ((Int, Int) -> Void)? = nil
  ) throws -> [Outcome?] {
    let requests = work.requests
    // The version the first request was made at, when it is to be rebased.
    var basis: UInt64? = nil
    if let expectVersion = work.expectVersion {
      let actual = try session.version(of: requests[0].stream)
      if actual != expectVersion {
        guard work.rebase, expectVersion < actual else {
          throw MsglogError.versionConflict(stream: requests[0].stream, expected: expectVersion, actual: actual)
        }
        basis = expectVersion
      }
    }
    // How far the first (rebased) insert moved: later inserts of the batch follow it.
    var shift = 0
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
        if let basis, i == 0 {
          let outcome = try session.perform(request, rebasingFrom: basis)
          if let outcome, case .insert(let insert) = request.command, let index = insert.index {
            shift = outcome.index - index
          }
          outcomes.append(outcome)
        } else if basis != nil, case .insert(var insert) = request.command, let index = insert.index {
          insert.index = index + shift
          var outcome = try session.perform(WriteRequest(stream: request.stream, command: .insert(insert)))
          outcome?.rebased = true
          outcomes.append(outcome)
        } else {
          outcomes.append(try session.perform(request))
        }
      } catch let error as MsglogError where lineNumbers != nil {
        throw MsglogError.line(lineNumbers![i], error)
      }
    }
    progress?(requests.count, requests.count)
    return outcomes
  }

  /// What `requests` may add to the database, records plus derived rows,
  /// for the map to grow once ahead of the write: a generous estimate is
  /// free (the map is address space).
  static func estimatedBytes(of requests: [WriteRequest]) -> Int {
    requests.reduce(0) { total, request in
      if case .insert(let insert) = request.command { return total + 2 * insert.text.utf8.count + 512 }
      return total + 256
    }
  }

  /// The requests of import lines, with the number of the line each came
  /// from (blank lines are skipped, and count).
  static func readImportLines(_ body: UnsafeRawBufferPointer, defaultStream: StreamName) throws(MsglogError) -> (
    [WriteRequest], [Int]
  ) {
    try ImportLineHalves.read(body) { part throws(MsglogError) in
      try readImportLines(part: part, defaultStream: defaultStream)
    }
  }

  /// `readImportLines` of a part of the input, its lines numbered from 1.
  static func readImportLines(part body: UnsafeRawBufferPointer, defaultStream: StreamName) throws(MsglogError) -> (
    [WriteRequest], [Int]
  ) {
    var requests: [WriteRequest] = []
    var lineNumbers: [Int] = []
    let lines = ImportLine.lineCount(body)
    requests.reserveCapacity(lines)
    lineNumbers.reserveCapacity(lines)
    var reader = ImportLine.Reader(defaultStream: defaultStream)
    var number = 0
    var start = 0
    while start < body.count {
      let end = ImportLine.endOfLine(body, from: start)
      number += 1
      let line = UnsafeRawBufferPointer(rebasing: body[start..<end])
      start = end + 1
      if ImportLine.isBlank(line) { continue }
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
    if let bulk = try bulkImport(requests, progress: progress) { return bulk }
    let outcomes = try perform(requests, lineNumbers: lineNumbers, progress: progress)
    let appended = outcomes.compactMap { $0 }
    // Nothing appended (no lines, or only moves onto themselves): the head is where it was.
    let head = appended.last?.event.seq ?? (try? headSeq()) ?? 0
    return ImportResult(imported: appended.count, head: head)
  }
}
