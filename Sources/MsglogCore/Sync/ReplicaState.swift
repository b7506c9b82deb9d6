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
  /// What proves this replica is itself to its remote, sent with every
  /// push; nil for a replica cloned before replicas had secrets (its next
  /// sync makes one). Never shown.
  package var secret: ReplicaSecret?

  public init(replica: ItemID, log: ItemID, remote: String, nextChange: UInt64 = 1, remoteHead: UInt64 = 0) {
    self.init(replica: replica, log: log, remote: remote, nextChange: nextChange, remoteHead: remoteHead, secret: nil)
  }

  package init(
    replica: ItemID, log: ItemID, remote: String, nextChange: UInt64 = 1, remoteHead: UInt64 = 0,
    secret: ReplicaSecret?
  ) {
    self.secret = secret
    self.replica = replica
    self.log = log
    self.remote = remote
    self.nextChange = nextChange
    self.remoteHead = remoteHead
  }
}
