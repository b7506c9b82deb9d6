/// What a replica knows of itself: who it is, what it is a copy of, and
/// where it is in its conversation with its remote.
public struct ReplicaState: Equatable, Sendable {
  /// The replica's id, made by `clone` (anew by `sync --reset`).
  public var replica: ItemID
  /// The id of the log it is a copy of.
  public var log: ItemID
  /// The remote's location as given to `clone` (shown redacted).
  public var remote: String
  /// The number the next change made here gets.
  public var nextChange: UInt64
  /// The remote's head when it was last heard from.
  public var remoteHead: UInt64

  public init(replica: ItemID, log: ItemID, remote: String, nextChange: UInt64 = 1, remoteHead: UInt64 = 0) {
    self.replica = replica
    self.log = log
    self.remote = remote
    self.nextChange = nextChange
    self.remoteHead = remoteHead
  }
}
