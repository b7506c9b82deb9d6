import MsglogCore

extension PostgresStore {
  package func write<R>(reserving bytes: Int, _ body: (any LogWriter) throws -> R) throws -> R {
    try write(reserving: bytes, touching: [], body)
  }

  /// One write transaction, whose critical section holds no client round
  /// trip: the head row is locked in the same pipeline that sends the
  /// writes and the `COMMIT` (the notification behind it).
  ///
  /// A long-running process's write goes first on what its last write left
  /// known (`WriteAttempt.onKnown`): one round trip. Otherwise optimistic
  /// (`.opening(.atCommit)`): the opening round trip takes a
  /// repeatable-read snapshot and fetches the head, the server's clock and
  /// the touched streams' heads, last events and order-tree roots without a
  /// lock; `body` validates against that snapshot (reading more if it must)
  /// and buffers its writes; the commit sends `SELECT … FOR UPDATE` on the
  /// head row first. If another writer committed after the snapshot, that
  /// lock fails (`HeadMoved`) before anything is written, and the write
  /// runs again the locked way: lock, read, validate, commit — seqs stay
  /// gapless and in commit order either way. A refusal found on the
  /// snapshot is a refusal at the moment the snapshot was taken, within the
  /// request's own lifetime.
  ///
  /// The first write creates the schema in its own transaction, so that a
  /// refused first write leaves nothing behind. Two first writers may race:
  /// the loser's CREATE SCHEMA fails, it rolls back and writes again into
  /// what the winner made. Any other failure, at any step, leaves the
  /// transaction to `giveBack`, which rolls it back or drops the connection.
  package func write<R>(reserving bytes: Int, touching streams: [StreamName], _ body: (any LogWriter) throws -> R)
    throws -> R
  {
    try write(reserving: bytes, touching: streams, whenSent: {}, body)
  }

  /// Overlapped commits (`EventStore.write(reserving:touching:whenSent:_:)`):
  /// the commit's pipeline asks the server for the answers to all but its
  /// `COMMIT` at once, and once they are in — the head row locked and
  /// moved, the rows written — what the write leaves is kept known as
  /// `committing` and `sent` is called, while the server flushes the
  /// commit. The next write on it goes out on another connection and
  /// waits at the head row's lock, whose check (seq and xmin) passes only
  /// once this commit is durable: if it fails, nothing of the next is
  /// written, and it is decided again on the log as it is. So seqs stay
  /// gapless and a write is acknowledged only once it is durable — and
  /// everything it was built on before it.
  package func write<R>(
    reserving bytes: Int, touching streams: [StreamName], whenSent sent: () -> Void,
    _ body: (any LogWriter) throws -> R
  ) throws -> R {
    try withConnection(writing: true) { connection in
      var attempt = firstAttempt(touching: streams)
      while true {
        let end: AttemptEnd<R>
        switch attempt {
        case .onKnown(let known): end = try writeOnKnown(known, on: connection, whenSent: sent, body)
        case .opening(let locking):
          end = try writeOpening(locking, on: connection, touching: streams, whenSent: sent, body)
        case .creatingSchema: end = try writeCreatingSchema(on: connection, touching: streams, body)
        }
        switch end {
        case .committed(let result): return result
        case .again(let next): attempt = next
        }
      }
    }
  }

  /// On what was known: one round trip, the commit's.
  private func writeOnKnown<R>(
    _ known: KnownState, on connection: Connection, whenSent sent: () -> Void, _ body: (any LogWriter) throws -> R
  ) throws -> AttemptEnd<R> {
    let access = Access(
      connection: connection, store: self,
      state: .knowing(head: known.head, version: known.headVersion, known.standing),
      cache: known.streams, commitTime: known.time)
    access.knownHorizon = known.horizon
    do {
      let result = try body(access)
      // A write that sent nothing checked nothing: what it decided on
      // what was known (nothing to do, or refusals within a batch) may
      // be stale, and is decided again the ordinary way.
      try commit(access, whenSent: sent) {
        guard access.state.checkedKnown else { return nil }
        return access.knownAfterCommit(serverClock: known.serverClock, readAt: known.readAt, lastTime: known.lastTime)
      }
      guard access.state.checkedKnown else { return .again(.opening(headLocking())) }
      return .committed(result)
    } catch let moved as HeadMoved {
      // Another writer committed since: nothing was written. Locked, as
      // this process's writes are for a while (`NextWrite.contended`).
      try rollBack(connection, after: moved)
      nextWrite.withLock { $0.noteContention() }
      return .again(.opening(.atOpening))
    } catch let refusal as MsglogError where refusal.category != .forbidden {
      // Refused on what was known, which another writer may have changed
      // since (an undo of an event appended meanwhile): nothing was
      // written, and the ordinary way decides on the log as it is.
      try rollBack(connection, after: refusal)
      return .again(.opening(headLocking()))
    }
  }

  /// With an opening round trip, on a snapshot or locked.
  private func writeOpening<R>(
    _ locking: HeadLocking, on connection: Connection, touching streams: [StreamName], whenSent sent: () -> Void,
    _ body: (any LogWriter) throws -> R
  ) throws -> AttemptEnd<R> {
    let begin = locking == .atCommit ? PostgresSchema.beginSnapshot : PostgresSchema.begin
    let opening = [begin, PostgresSchema.opening(locking: locking == .atOpening)]
    let rows: [Rows]
    do {
      // No schema yet: create it, in a transaction that locks.
      guard let opened = try open(connection, opening + Opening.prefetch(streams), creating: false) else {
        return .again(.creatingSchema)
      }
      rows = opened
    } catch let error as PostgresError where error.sqlState == PostgresError.readOnlyTransaction {
      throw try readOnlyRefusal(error, on: connection)
    }
    do {
      return .committed(
        try writeOpened(
          rows, headAt: 1, locked: locking == .atOpening, on: connection, streams, whenSent: sent, body))
    } catch let moved as HeadMoved {
      // The head moved after the snapshot: nothing was written. Again,
      // locked — and so do this process's writes for a while.
      try rollBack(connection, after: moved)
      nextWrite.withLock { $0.noteContention() }
      return .again(.opening(.atOpening))
    }
  }

  /// The first write: the schema created in its opening round trip, locked.
  private func writeCreatingSchema<R>(
    on connection: Connection, touching streams: [StreamName], _ body: (any LogWriter) throws -> R
  ) throws -> AttemptEnd<R> {
    let opening = [PostgresSchema.begin] + PostgresSchema.creation + [PostgresSchema.opening(locking: true)]
    let rows: [Rows]
    do {
      rows = try open(connection, opening + Opening.prefetch(streams), creating: true)!
    } catch let error as PostgresError where PostgresSchema.lostTheRace(error) {
      // Another first writer made the schema: write into it.
      try rollBack(connection, after: error)
      return .again(.opening(.atOpening))
    } catch let error as PostgresError where error.sqlState == PostgresError.readOnlyTransaction {
      throw try readOnlyRefusal(error, on: connection)
    }
    let result = try writeOpened(
      rows, headAt: opening.count - 1, locked: true, creating: true, on: connection, streams, body)
    // Its maker owns the schema, with every table this msglog makes.
    noteVersions(schema: PostgresSchema.firstVersion, tables: PostgresSchema.tablesVersion)
    ownsSchema.withLock { $0 = true }
    return .committed(result)
  }

  /// Runs `body` in a transaction whose opening round trip answered
  /// `rows` (the head's at `headAt`, the prefetched streams' after it),
  /// and commits.
  private func writeOpened<R>(
    _ rows: [Rows], headAt: Int, locked: Bool, creating: Bool = false, on connection: Connection,
    _ streams: [StreamName], whenSent sent: () -> Void = {}, _ body: (any LogWriter) throws -> R
  ) throws -> R {
    let readAt = ContinuousClock.now
    let opened = try Opening(rows[headAt], shown: shown)
    if opened.inRecovery {
      throw MsglogError.readOnly(location: shown, store: .postgres, reason: Self.replicaRefusal)
    }
    let access = Access(
      connection: connection, store: self, state: .opened(head: opened.head, locked: locked, creating: creating),
      commitTime: opened.time)
    access.openedHorizon = .some(opened.horizonRow)
    let floor = opened.horizonRow == nil ? 1 : try access.horizon().seq
    access.cache = try StreamCache(prefetched: Array(rows[(headAt + 1)...]), for: streams, from: floor)
    do {
      let result = try body(access)
      try commit(access, whenSent: sent) {
        access.knownAfterCommit(serverClock: opened.serverClock, readAt: readAt, lastTime: opened.lastTime)
      }
      return result
    } catch let error as PostgresError where error.sqlState == PostgresError.readOnlyTransaction {
      throw try readOnlyRefusal(error, on: connection)
    }
  }

  /// Commits what `access` wrote, with what this process's writes add to
  /// a write: the log's id, the tables brought up by their owner; and
  /// keeps what it `leaves` known for the next write.
  ///
  /// Once everything but the `COMMIT` is answered, that is kept as
  /// `committing` and `sent` is called: the next write may be built on it
  /// while the server flushes this commit (see `write(…whenSent:…)`). If
  /// the commit then fails, it is forgotten. Not for a commit that moves
  /// the schema or the tables on, or gives the log its id: what this
  /// process notes of those waits until they are durable, and so does the
  /// next write (they are rare: a process's first writes).
  private func commit(_ access: Access, whenSent sent: () -> Void, leaving leaves: () -> KnownState?) throws {
    let givesID = giveLogAnID(with: access)
    try access.bringTablesUpIfOwner()
    let overlaps = !givesID && access.buffer.schemaUpgrade == nil && access.buffer.tablesUpgrade == nil
    var keptEarly: KnownState? = nil
    func written() {
      keptEarly = leaves().map { known in
        var committing = known
        committing.standing = .committing
        return committing
      }
      keep(keptEarly)
      sent()
    }
    do {
      try withoutActuallyEscaping(written) { written in
        try access.commit(whenWritten: overlaps ? written : nil)
      }
    } catch {
      // What the next write was told it may build on is not to be.
      if keptEarly != nil { keep(nil) }
      throw error
    }
    // Durable: a notification announcing this head (or a lower one) can be taken at its word.
    if let head = access.state.head { committedHere.withLock { $0 = max($0, head) } }
    noteLogID(of: access)
    noteUpgrades(of: access)
    if let keptEarly {
      settle(keptEarly)
    } else {
      keep(leaves())
    }
  }

  /// Rolls back the transaction a setback left open, before the next try
  /// on the same connection; `setback` is thrown if it cannot be.
  private func rollBack(_ connection: Connection, after setback: any Error) throws {
    guard connection.isInTransaction else { return }
    guard try rollBack(connection) else { throw setback }
  }

  // MARK: - What the last writes left

  /// How a write begins: on what was known if it covers `streams`, else
  /// with an opening round trip.
  private func firstAttempt(touching streams: [StreamName]) -> WriteAttempt {
    nextWrite.withLock { next in
      // Another process writes too: its commits would fail a write on what
      // this one knew, and each such failure is an ERROR in the server's log.
      if next.contended(at: .now) { return .opening(.atOpening) }
      guard let known = next.known, known.covers(streams) else {
        // Behind a write still committing, a snapshot would miss it: lock.
        return .opening(next.known?.standing == .committing ? .atOpening : .atCommit)
      }
      // One writer uses it at a time.
      next.known = nil
      return .onKnown(known)
    }
  }

  /// How a write that opens with a round trip locks: as it opens while
  /// this process has lately met another's commit (`NextWrite.contended`:
  /// writers elsewhere are busy), else with its commit.
  private func headLocking() -> HeadLocking {
    nextWrite.withLock { $0.contended(at: .now) } ? .atOpening : .atCommit
  }

  /// Keeps what a write that committed (or is committing) leaves known
  /// (nil: nothing).
  private func keep(_ state: KnownState?) {
    nextWrite.withLock { $0.known = state }
  }

  /// What a write kept known while committing is now durable, unless the
  /// next write has taken it meanwhile (that write's own is then kept).
  private func settle(_ state: KnownState) {
    nextWrite.withLock { next in
      guard next.known?.head == state.head, next.known?.headVersion == state.headVersion else { return }
      next.known?.standing = .committed
    }
  }

  /// What this process's writes leave for its next one.
  struct NextWrite {
    /// What the last write left known (see `KnownState`); taken by the
    /// write that uses it.
    var known: KnownState? = nil
    /// When a write of this process last found another's commit ahead of
    /// what it was built on (`HeadMoved`), and how many times that has
    /// happened (tests). For `contentionMemory` after, every write locks
    /// the head as it opens: with another process writing (two `serve`s
    /// behind one balancer), a write on what was known, or on a snapshot,
    /// fails nearly every time, and each failure is an ERROR line in
    /// PostgreSQL's log (a team lead saw one a write) and a round trip
    /// more. Once that long has passed without one, the next write tries
    /// the optimistic way again: at most one such failure a second.
    var contendedAt: ContinuousClock.Instant? = nil
    var headsMoved = 0
    static let contentionMemory: Duration = .seconds(1)

    mutating func noteContention() {
      contendedAt = .now
      headsMoved += 1
    }

    func contended(at now: ContinuousClock.Instant) -> Bool {
      contendedAt.map { now - $0 < Self.contentionMemory } ?? false
    }
  }

  // MARK: - The log's id and versions

  /// Gives a log made before logs had ids its id, with this process's
  /// first write that appends (an id the log has is kept).
  /// Whether it does.
  @discardableResult
  private func giveLogAnID(with access: Access) -> Bool {
    guard access.lastAppended != nil, !logHasID.withLock({ $0 }) else { return false }
    access.buffer.giveLogID(.random())
    return true
  }

  /// After a commit that gave the log its id (or found it had one).
  private func noteLogID(of access: Access) {
    if access.lastAppended != nil { logHasID.withLock { $0 = true } }
  }

  /// Notes what a commit moved: the schema's version, the tables.
  private func noteUpgrades(of access: Access) {
    if let version = access.buffer.schemaUpgrade { noteVersions(schema: version) }
    if access.buffer.tablesUpgrade != nil { noteVersions(tables: PostgresSchema.tablesVersion) }
  }
}
