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
      WriteBatch(
        [WriteRequest(stream: stream, command: .move(from: from, to: to, id: nil))], expectVersion: expectVersion,
        rebase: rebase))[0]
  }

  /// Removes a live item, named by its id or a unique prefix of 8+ characters.
  /// With `rebase`, a stream that moved past `expectVersion` is no conflict:
  /// the item is named by id.
  @discardableResult
  public func remove(
    _ item: ItemSelector, from stream: StreamName = .main, expectVersion: UInt64? = nil, rebase: Bool = false
  ) throws -> Outcome {
    try perform(
      WriteBatch([WriteRequest(stream: stream, command: .remove(item))], expectVersion: expectVersion, rebase: rebase))[
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
      WriteBatch(
        [WriteRequest(stream: stream, command: .edit(item, text: text, sender: sender))], expectVersion: expectVersion,
        rebase: rebase))[0]
  }

  /// Gives the live item with this id new text (as `edit(_:text:…)`).
  @discardableResult
  public func edit(
    id: ItemID, text: String, sender: String? = nil, in stream: StreamName = .main, expectVersion: UInt64? = nil,
    rebase: Bool = false
  ) throws -> Outcome? {
    try edit(.id(id), text: text, sender: sender, in: stream, expectVersion: expectVersion, rebase: rebase)
  }

  /// Brings the removed item with this id back (as `restore(_:at:…)`).
  @discardableResult
  public func restore(id: ItemID, at index: Int? = nil, in stream: StreamName = .main, expectVersion: UInt64? = nil)
    throws -> Outcome
  {
    try restore(.id(id), at: index, in: stream, expectVersion: expectVersion)
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
      WriteBatch([WriteRequest(stream: stream, command: .restore(item, index: index))], expectVersion: expectVersion))[
        0]!
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
  ///
  /// - Parameter sender: who undid: an edit's undoing (an edit back) names
  ///   them, as any edit names who edited; the other undoings name no one.
  @discardableResult
  public func undo(
    _ seq: UInt64? = nil, in stream: StreamName = .main, sender: String? = nil, expectVersion: UInt64? = nil
  ) throws -> Outcome? {
    try perform(
      WriteBatch(
        [WriteRequest(stream: stream, command: .undo(seq: seq, sender: sender))], expectVersion: expectVersion))[0]
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
  ///     or a move by the predecessor rule, a remove or an edit by its
  ///     item's id; later inserts of the batch follow it). Needs
  ///     `expectVersion`, and a first request of one of those four.
  ///   - progress: called now and then with (done, total).
  /// - Returns: one outcome per request; nil for one that changes nothing
  ///   (a move onto itself, an edit to the same text, an undo in effect).
  public func perform(
    _ requests: [WriteRequest], expectVersion: UInt64? = nil, rebase: Bool = false,
    progress: ((Int, Int) -> Void)? = nil
  ) throws -> [Outcome?] {
    try perform(WriteBatch(requests, expectVersion: expectVersion, rebase: rebase), progress: progress)
  }

  /// `perform` of a batch a door made (`WriteBatch`, checked when made).
  ///
  /// - Parameter lineNumbers: when given (an import's lines, `append
  ///   --lines`' lines of stdin), a refused request's error names its line.
  package func perform(_ batch: WriteBatch, lineNumbers: [Int]? = nil, progress: ((Int, Int) -> Void)? = nil)
    throws -> [Outcome?]
  {
    guard !batch.requests.isEmpty else { return [] }
    // A replica's writes pend, on its local view, until a sync.
    if try replicaState() != nil { return try performPending(batch, lineNumbers: lineNumbers) }
    guard batch.requests.count <= Self.groupedRequests, lineNumbers == nil, progress == nil else {
      return try transact(batch, lineNumbers: lineNumbers, progress: progress)
    }
    return try commits.submit(batch) { tickets, sent in try commitObserved(tickets, whenSent: sent) }
  }

  /// `perform` of one write, answered later: `done` is called with its
  /// outcomes — by the thread that commits its batch, which may be this
  /// one (before this returns) or another. Nothing waits for the commit:
  /// a server's worker is free as soon as its write is queued, and the
  /// committing thread answers every write of a batch (`CommitQueue`).
  /// `done` must hand its answer on, and never write to the log itself
  /// (`CommitQueue.enqueue`).
  ///
  /// - Parameter buildingHere: whether this thread may build and commit a
  ///   batch itself; false on a thread that must never wait for the store
  ///   (an event loop), which then calls only when `queuesWithoutReading`.
  package func perform(
    _ batch: WriteBatch, buildingHere: Bool = true,
    then done: @escaping @Sendable (Result<[Outcome?], any Error>) -> Void
  ) {
    guard !batch.requests.isEmpty else { return done(.success([])) }
    do {
      if try replicaState() != nil { return done(.success(try performPending(batch, lineNumbers: nil))) }
    } catch {
      return done(.failure(error))
    }
    guard batch.requests.count <= Self.groupedRequests else { return done(Result { try transact(batch) }) }
    commits.enqueue(
      batch, commit: { [self] tickets, sent in try commitObserved(tickets, whenSent: sent) },
      buildingHere: buildingHere, then: done)
  }

  /// Whether `perform(_:buildingHere:then:)` of one write can
  /// queue it without reading the store on the calling thread: once the
  /// log is known not to be a replica (a PostgreSQL log never is).
  package var queuesWithoutReading: Bool {
    !store.keepsReplicas || replicaKnown.withLock { $0 } == false
  }

  /// `commit`, told to the commit observer (a server's metrics) when there is one.
  private func commitObserved(_ tickets: [CommitQueue<WriteBatch, [Outcome?]>.Ticket], whenSent sent: () -> Void)
    throws
  {
    guard let observer = commitObservers.observer else { return try commit(tickets, whenSent: sent) }
    let started = ContinuousClock.now
    defer {
      // The events each call appended (none for one refused, or when the transaction failed).
      var events = 0
      for ticket in tickets { events += (try? ticket.result?.get())?.reduce(0) { $0 + ($1 == nil ? 0 : 1) } ?? 0 }
      observer.committed(writes: tickets.count, events: events, duration: ContinuousClock.now - started)
    }
    try commit(tickets, whenSent: sent)
  }

  /// One batch in a transaction of its own, straight to the store.
  func transact(
    _ batch: WriteBatch, lineNumbers: [Int]? = nil, progress: ((Int, Int) -> Void)? = nil,
    whenSent sent: () -> Void = {}
  ) throws -> [Outcome?] {
    try write(reserving: batch.estimatedBytes, touching: batch.streams, whenSent: sent) { session in
      try session.perform(batch, lineNumbers: lineNumbers, progress: progress)
    }
  }
}
