import MsglogCore

extension PostgresStore {
  /// `LogReader`/`LogWriter` over one transaction on one connection.
  ///
  /// Reads are single statements (in batches where the caller asks for
  /// many rows; `Access+Reading`), answered from `cache` where it can.
  /// Writes are buffered (`WriteBuffer`, filled by `Access+Writing`) and
  /// sent in one pipeline: before the next read of a table they touch (so
  /// that the transaction reads its own writes) and at commit, together
  /// with moving the head and `COMMIT`, the notification behind it. `state` says
  /// what must go in front of them: the `BEGIN`, the head row's lock.
  final class Access: LogWriter {
    let connection: Connection
    unowned let store: PostgresStore
    var state: TransactionState
    var cache: StreamCache
    var buffer = WriteBuffer()
    /// The server's clock at the transaction's start, never earlier than
    /// the log's last event: the time of the events it appends.
    let commitTime: Timestamp?
    /// The record of the last event appended, for the time the next must not fall behind.
    var lastAppended: [UInt8]? = nil
    /// A bulk load's copy in progress (`Access+BulkLoading`): ended before
    /// anything else is sent.
    var copy: (table: PostgresSchema.CopyTable, rows: CopyRows)? = nil
    /// The tables whose keys a bulk load dropped, to build once all rows
    /// are in (`finishLoading`, or at the latest the commit).
    var keysToBuild: [PostgresSchema.CopyTable] = []
    /// Whether sync's tables exist, once a read asked.
    var syncTablesKnown: Bool? = nil
    /// The horizon's row as the transaction's opening read it, not decoded
    /// yet (`.some(nil)`: there is none); nil when it was not read.
    var openedHorizon: [UInt8]?? = nil
    /// The horizon, decoded (`Access+Trim`).
    var knownHorizon: Horizon? = nil

    init(
      connection: Connection, store: PostgresStore, state: TransactionState, cache: StreamCache = StreamCache(),
      commitTime: Timestamp? = nil
    ) {
      self.connection = connection
      self.store = store
      self.state = state
      self.cache = cache
      self.commitTime = commitTime
    }

    var writing: Bool { state.writes }

    /// Runs a read of `table`, after sending what is buffered for it (and
    /// with the `BEGIN`, in a write on what was known that sent nothing yet).
    /// A privilege refused is a `MsglogError` here already, naming what the
    /// role lacks, so that a caller that goes on past a failed read
    /// (`verify`) tells it from damage.
    func query(_ table: WriteBuffer.Table, _ statement: Statement) throws -> Rows {
      try endCopy()
      if buffer.holds(table) { try flush() }
      do {
        guard state.phase == .unsent else { return try connection.execute(statement.sql, statement.parameters) }
        return try send([statement], locking: false).last!
      } catch let error as PostgresError where error.sqlState == PostgresError.insufficientPrivilege {
        throw store.privilegeRefusal(error, writing: writing)
      }
    }

    /// Sends the buffered writes (one pipeline) so that the next read sees them.
    func flush() throws {
      try endCopy()
      guard writing, !buffer.isEmpty else { return }
      try send(buffer.take(), locking: true)
    }

    /// Takes the head row's lock now, if it is not held, for writes that
    /// do not go through the buffer (a bulk load's `COPY`), with whatever
    /// the buffer holds.
    func lock() throws {
      try endCopy()
      guard state.phase < .locked || !buffer.isEmpty else { return }
      try send(buffer.take(), locking: true)
    }

    /// Sends `statements` in one pipeline, with what must go in front of
    /// them (`TransactionState.sending`).
    ///
    /// - Parameter answered: given the answers to all but the last
    ///   statement as soon as the server has them (`Connection.pipeline`).
    /// - Parameter afterwards: sent behind them in the same round trip;
    ///   their failure is not thrown (`Connection.pipeline`).
    /// - Throws: `HeadMoved` when the head row's lock, sent in front of
    ///   them, finds that another writer committed after the state this
    ///   transaction validated against: nothing was written.
    @discardableResult
    func send(
      _ statements: [Statement], locking: Bool, beforeLast answered: (([Rows]) -> Void)? = nil,
      afterwards: [Statement] = []
    ) throws -> [Rows] {
      let outgoing = state.sending(statements, locking: locking)
      let early = answered.map { (last: outgoing.statements.count - 2, answered: $0) }
      let sent = Result { () throws(PostgresError) -> [Rows] in
        try connection.pipeline(outgoing.statements, early: early, afterwards: afterwards)
      }
      if case .failure(let error) = sent, let lock = outgoing.lockAt, error.statement == lock, state.headMoved(error) {
        throw HeadMoved()
      }
      return try sent.get()
    }

    /// Sends what is left, moves the head, commits and notifies followers:
    /// one round trip, which also takes the head's lock if it is not held
    /// yet. A transaction that wrote nothing just ends.
    ///
    /// The notification is a transaction of its own behind the commit
    /// (`PostgresSchema.notifyAfterCommit`): a `NOTIFY` inside it would
    /// hold PostgreSQL's one lock for notifying transactions through its
    /// flush, and no two writers' commits — of this process or any other
    /// on the database — could then be flushed together.
    ///
    /// - Parameter written: called (if at all) once everything but the
    ///   `COMMIT` is answered — the lock held, the rows written, the head
    ///   moved (`state` is `.committing`, with the head row's version) —
    ///   while the server flushes the commit; `commit` still returns only
    ///   once it is durable.
    func commit(whenWritten written: (() -> Void)? = nil) throws {
      try endCopy()
      var batch = buildingKeys() + buffer.take()
      var movesHead = false
      var notice: [Statement] = []
      if let head = state.head, state.phase == .wrote || !batch.isEmpty {
        movesHead = true
        batch.append(PostgresSchema.moveHead(to: head))
        // Once per transaction, however many events it appends.
        if head != state.openingHead { notice = PostgresSchema.notifyAfterCommit(head: head) }
      }
      guard state.phase != .unsent || !batch.isEmpty else {  // nothing sent, nothing to end
        state.committed(version: nil)
        return
      }
      // The head's move is counted from the end: a BEGIN and the lock may be in front.
      let early = written.map { written in
        { (rows: [Rows]) in
          self.state.committing(version: movesHead ? rows[rows.count - 1].text(0, 0) : nil)
          written()
        }
      }
      let rows = try send(
        batch + [PostgresSchema.commit], locking: movesHead, beforeLast: early, afterwards: notice)
      state.committed(version: movesHead ? rows[rows.count - 2].text(0, 0) : nil)
      if !notice.isEmpty, connection.isInTransaction { notifyAgain(notice) }
    }

    /// The notification behind a durable commit failed on a live
    /// connection, which it left in its own failed transaction: ends that
    /// transaction and sends the notification once more, alone. Without
    /// it, followers would wake only at the next write's notification.
    /// Nothing here is thrown, as the first failure was not: the write is
    /// done. (A second failure's transaction is rolled back where every
    /// transaction ends, `PostgresStore.giveBack`.)
    private func notifyAgain(_ notice: [Statement]) {
      guard (try? connection.execute(PostgresSchema.rollBack.sql)) != nil else { return }
      _ = try? connection.pipeline(notice)
    }

    /// What this transaction leaves known, once it has committed: the head,
    /// and the heads, last events and nodes of the streams it read or
    /// wrote; nil after a rebuild or a bulk load (nothing worth keeping).
    func knownAfterCommit(serverClock: Timestamp, readAt: ContinuousClock.Instant, lastTime: Timestamp)
      -> KnownState?
    {
      guard let head = state.head, let version = state.committedVersion, !cache.isForgotten,
        cache.nodes.count <= KnownState.nodeLimit, let horizon = horizonWithoutAsking
      else { return nil }
      var time = lastTime
      if let record = lastAppended,
        let event = try? record.withUnsafeBytes({ try EventRecord.decode($0, verifyingChecksum: false) }),
        event.time > time
      {
        time = event.time
      }
      return KnownState(
        head: head, headVersion: version, streams: cache, horizon: horizon, lastTime: time, serverClock: serverClock,
        readAt: readAt)
    }
  }
}

/// Another writer committed after the state a write validated against (the
/// head row's lock, sent in front of its writes, found the row moved):
/// nothing was written, and the write is decided again on the log as it is.
struct HeadMoved: Error {}
