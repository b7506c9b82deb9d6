/// What an accepted command appended.
///
/// In a replica a write is a pending change until a sync: its `event` is
/// the one the local view shows, with seq 0 — it has no seq of the log
/// until the remote does it, as a pending `Item` has none — and the local
/// view's version (what `expectVersion` is checked against there).
/// `status` says which.
public struct Outcome: Equatable, Sendable {
  /// The event appended (its seq, version, time and op as stored).
  public var event: Event
  /// insert, restore: where the item went; remove, edit: where it was; move: its final index.
  public var index: Int
  /// The command was made at an older version of the stream and transformed
  /// to its head (a rebase): the event's indices are the head's.
  public var rebased: Bool
  /// In a replica: the number of the pending change the command became
  /// (its event is the local view's, not yet the remote's). `status` says
  /// the same as a case to switch on.
  public var pending: UInt64?
  /// An erase: how many events' texts it blanked (its item's insert and edits).
  package var blanked = 0

  public init(event: Event, index: Int, rebased: Bool = false, pending: UInt64? = nil) {
    self.event = event
    self.index = index
    self.rebased = rebased
    self.pending = pending
  }

  /// Where a write stands.
  public enum Status: Equatable, Sendable {
    /// Done: its event is the log's, at `seq`.
    case committed(seq: UInt64)
    /// In a replica: kept as pending change `change` (1, 2, 3 … for the
    /// life of the replica) until a sync; no seq yet.
    case pending(change: UInt64)
  }

  /// Whether the write is done at a seq of the log, or pending in a replica.
  public var status: Status {
    if let pending { return .pending(change: pending) }
    return .committed(seq: event.seq)
  }
}
