/// `erase`: forgetting items for everyone (docs/REFERENCE.md, "Forgetting
/// on purpose").
extension EventLog {
  /// What an erase did: the items it erased now (an item erased before is
  /// not among them), how many events' texts it blanked (or senders it took
  /// off), and the seq of its last event, an erase or an unsign (nil when it
  /// did nothing).
  public struct Erasure: Equatable, Sendable {
    public var erased: [ItemID]
    /// The inserts and edits whose text (and sender) it blanked, and the
    /// edits it unsigned (their sender taken off, their text kept).
    public var events: Int
    public var seq: UInt64?
  }

  /// Erases each item `items` names (its id, or a unique prefix among the
  /// stream's items, live or removed), in one transaction: a live item
  /// leaves the list as by `remove`, and from then on its text is gone from
  /// its insert and every edit, at every seq; the events keep their slots.
  /// An erased item never comes back (`restore`, `edit`, `undo` refuse it
  /// with `MsglogError.itemErased`). An item erased already is skipped.
  @discardableResult
  public func erase(_ items: [ItemSelector], in stream: StreamName = .main) throws -> Erasure {
    try erasing(items.map { WriteRequest(stream: stream, command: .erase($0)) })
  }

  /// Erases every item whose insert names `sender`, in `stream` or, when
  /// nil, in every stream; their events then name no sender. The edits
  /// `sender` made of others' items keep their text and name no sender
  /// either: each gets an unsign event (`Event.Op.unsign`), which tells
  /// every copy of the log to do the same.
  @discardableResult
  public func erase(sender: String, in stream: StreamName? = nil) throws -> Erasure {
    // The items and edits are found in one read and forgotten in one
    // write: what the sender writes in between is theirs to erase next
    // time. (An erased insert and an unsigned edit name no sender, so
    // erasing again finds nothing.)
    // A sender no write could have named is refused as a write's would be,
    // and a replica's erase before anything is read (as `erase ID` is, by
    // its local view; the snapshot below is that view, which holds no
    // replica state, so it is asked of the log itself).
    try Limits.checkSender(sender)
    if try replicaState() != nil {
      throw MsglogError.invalidInput(.write("a replica cannot erase; erase at its remote, and sync"))
    }
    let requests = try read { snapshot -> [WriteRequest] in
      var erases: [WriteRequest] = []
      var unsigns: [WriteRequest] = []
      var theirs: Set<ItemID> = []
      func take(_ event: Event) {
        guard stream == nil || event.stream == stream else { return }
        switch event.op {
        case .insert(let id, _, _, let named?) where named.hasSameBytes(as: sender):
          theirs.insert(id)
          erases.append(WriteRequest(stream: event.stream, command: .erase(.id(id))))
        case .edit(let id, _, let named?, _, _, _) where named.hasSameBytes(as: sender) && !theirs.contains(id):
          // (An edit of their own item is blanked with it.)
          unsigns.append(WriteRequest(stream: event.stream, command: .unsign(.id(id), edit: event.seq)))
        default: break
        }
      }
      // A trimmed log: the records its bases kept come first (all below the horizon).
      for event in try snapshot.keptTextRecords() { take(event) }
      try snapshot.forEachEvent(stream: stream) { event in
        take(event)
        return true
      }
      return erases + unsigns
    }
    return try erasing(requests)
  }

  /// Performs erase requests (a door decoded them) as one batch.
  package func erasing(_ requests: [WriteRequest]) throws -> Erasure {
    let outcomes = try perform(requests)
    var erasure = Erasure(erased: [], events: 0, seq: nil)
    for outcome in outcomes {
      guard let outcome else { continue }
      if case .erase = outcome.event.op { erasure.erased.append(outcome.event.id) }
      erasure.events += outcome.blanked
      erasure.seq = outcome.event.seq
    }
    return erasure
  }
}

extension EventLog {
  /// Scrubs what erasure left in the database's files while other
  /// processes go on using it (docs/REFERENCE.md, "Forgetting on purpose"):
  /// on LMDB every free page and the unused middle of every page in use zeroed;
  /// on PostgreSQL msglog's tables are rewritten (`VACUUM FULL`) and a
  /// checkpoint asked for. Returns the bytes scrubbed.
  ///
  /// - Throws: `MsglogError.purgeNotSupported` on a store without one,
  ///   `purgeHeldByReader` when another process's read kept old pages,
  ///   `purgeHeldByTransaction` when a PostgreSQL snapshot older than the
  ///   purge outlasted its wait, `purgeHeldByLock` when a session kept a
  ///   lock on one of msglog's tables through its tries.
  /// - Parameter waiting: told what purge waits for when it must wait long
  ///   (still there after about 300 ms; up to about ten seconds for the
  ///   snapshots, and ten more for the tables' locks): on PostgreSQL the
  ///   oldest session, replication slot or prepared transaction older than
  ///   it ("…, older than the purge,"), or what keeps a table's lock ("…,
  ///   which keeps a lock on msglog."events","), named as the error would.
  @discardableResult
  public func purge(waiting: (String) -> Void = { _ in }) throws -> UInt64 {
    try purge(waiting: waiting, paying: try owedPurge())
  }

  /// `purge`, marking paid the purge `owed` (`owedPurge`) once it is done.
  func purge(waiting: (String) -> Void = { _ in }, paying owed: (head: UInt64, horizon: UInt64)?) throws -> UInt64 {
    do {
      guard let scrubbed = try store.purge(waiting: waiting) else {
        throw MsglogError.purgeNotSupported(location: location)
      }
      if let owed { try pay(owed) }
      return scrubbed
    } catch {
      throw MsglogError(anyStoreFailure: error)
    }
  }

  /// A replica's purge owed (`owingPurge`), with the head and horizon it
  /// was owed at; nil when none is (or the store is not LMDB's).
  func owedPurge() throws(MsglogError) -> (head: UInt64, horizon: UInt64)? {
    guard store.kind == .lmdb else { return nil }
    return try readingBase { reader in
      guard try (reader as? any ReplicaStateReader)?.purgeIsOwed() == true else { return nil }
      return (try reader.headSeq(), try reader.horizon().seq)
    }
  }

  /// Marks the purge owed paid, unless a pull moved the replica on while
  /// the purge ran (its head or horizon changed): that pull may have owed
  /// another, which the next purge pays.
  private func pay(_ owed: (head: UInt64, horizon: UInt64)) throws {
    try writing { writer in
      guard let replicas = writer as? any ReplicaStateWriter, try writer.headSeq() == owed.head,
        try writer.horizon().seq == owed.horizon
      else { return }
      try replicas.putPurgeOwed(false)
    }
  }
}
