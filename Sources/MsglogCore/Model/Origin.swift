/// Where an event came from when a replica made it: the replica, the
/// change's number there (1, 2, 3 … for the life of the replica) and when
/// it was made on the replica's clock. The event's own `time` is the
/// server's, when it was appended.
///
/// The server appends change N of a replica at most once, in the same
/// transaction that records it as done (docs/SYNC.md): the origin is how
/// the log says which event each change became.
public struct Origin: Hashable, Sendable {
  /// The replica's id, made by `clone`.
  public var replica: ItemID
  /// The change's number on the replica, from 1.
  public var change: UInt64
  /// When the change was made on the replica.
  public var made: Timestamp

  public init(replica: ItemID, change: UInt64, made: Timestamp) {
    self.replica = replica
    self.change = change
    self.made = made
  }
}
