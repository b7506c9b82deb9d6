/// `erase`: forgetting items for everyone (docs/REFERENCE.md, "Forgetting
/// on purpose").
extension EventLog {
  /// What an erase did: the items it erased now (an item erased before is
  /// not among them), how many events' texts it blanked, and the seq of its
  /// last erase event (nil when it erased nothing).
  public struct Erasure: Equatable, Sendable {
    public var erased: [ItemID]
    /// The inserts and edits whose text (and sender) it blanked.
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
  /// nil, in every stream; their events then name no sender.
  @discardableResult
  public func erase(sender: String, in stream: StreamName? = nil) throws -> Erasure {
    // The items are found in one read and erased in one write: an item
    // the sender adds in between is theirs to erase next time. (An erased
    // insert names no sender, so erasing again finds nothing.)
    let requests = try read { snapshot -> [WriteRequest] in
      var found: [WriteRequest] = []
      try snapshot.forEachEvent(stream: stream) { event in
        if case .insert(let id, _, _, let named?) = event.op, named == sender {
          found.append(WriteRequest(stream: event.stream, command: .erase(.id(id))))
        }
        return true
      }
      return found
    }
    return try erasing(requests)
  }

  /// Performs erase requests (a door decoded them) as one batch.
  package func erasing(_ requests: [WriteRequest]) throws -> Erasure {
    let outcomes = try perform(requests)
    var erasure = Erasure(erased: [], events: 0, seq: nil)
    for outcome in outcomes {
      guard let outcome else { continue }
      erasure.erased.append(outcome.event.id)
      erasure.events += outcome.blanked
      erasure.seq = outcome.event.seq
    }
    return erasure
  }
}

extension EventLog {
  /// Scrubs what erasure left in the database's files while other
  /// processes go on using it (docs/REFERENCE.md, "Forgetting on purpose"):
  /// on LMDB every live page is written again and every free page zeroed;
  /// on PostgreSQL msglog's tables are rewritten (`VACUUM FULL`) and a
  /// checkpoint asked for. Returns the bytes scrubbed.
  ///
  /// - Throws: `MsglogError.purgeNotSupported` on a store without one,
  ///   `purgeHeldByReader` when another process's read kept old pages.
  @discardableResult
  public func purge() throws -> UInt64 {
    do {
      guard let scrubbed = try store.purge() else { throw MsglogError.purgeNotSupported(location: location) }
      return scrubbed
    } catch {
      throw MsglogError(anyStoreFailure: error)
    }
  }
}
