/// The log a replica syncs with, as the replica sees it: three calls, the
/// same over HTTP (`msglog serve`'s sync routes) as on a log opened in
/// process (a `postgres://` location). docs/SYNC.md, "Protocol".
package protocol SyncRemote: AnyObject {
  /// The remote's location as messages show it (credentials redacted).
  var shown: String { get }
  /// What the remote says first: its protocol, its log's id, its head.
  func hello() throws -> RemoteHello
  /// Has the remote do `changes` of `replica` (in order, each at most
  /// once), proving it is that replica with its `secret`.
  func push(_ changes: [ReplicaChange], replica: ItemID, secret: ReplicaSecret, log: ItemID) throws -> PushAnswer
  /// The remote's records after `seq`, a bounded page, once it has checked
  /// that its record at `seq` is the one the replica has (`check`: that
  /// record's CRC-32C, its last 4 bytes).
  func pull(after seq: UInt64, check: UInt32?, log: ItemID, limit: Int) throws -> RecordPage
  /// Waits until the remote's head passes `seq`, at most `seconds`, or
  /// until `stop` says to; true when it did.
  func waitForEvents(after seq: UInt64, seconds: Double, stop: @escaping @Sendable () -> Bool) throws -> Bool
  /// A run begins (a clone, a sync, a round of a live sync): the calls
  /// after it share its bound (`SyncOptions.timeout`) where the remote has
  /// one.
  func startRun()
}

extension SyncRemote {
  package func startRun() {}
}

/// The sync protocol's version; a side that does not know the other's refuses.
package let syncProtocolVersion = 1

/// What a remote says first.
public struct RemoteHello: Equatable, Sendable {
  /// Its sync protocol (`syncProtocolVersion`).
  public var protocolVersion: Int
  /// The newest record format its log may hold.
  public var recordFormat: Int
  /// Its log's id; nil for a log made before logs had one (not yet clonable).
  public var log: ItemID?
  public var head: UInt64

  public init(protocolVersion: Int, recordFormat: Int, log: ItemID?, head: UInt64) {
    self.protocolVersion = protocolVersion
    self.recordFormat = recordFormat
    self.log = log
    self.head = head
  }
}

/// A remote's answer to a push.
public struct PushAnswer: Equatable, Sendable {
  /// Its head after the push.
  public var head: UInt64
  /// One per change pushed, in order.
  public var outcomes: [ChangeOutcome]
  /// How many of the first outcomes are of changes done before, sent
  /// again (a lost answer): the remote's own count, not on the wire.
  package var resent = 0

  public init(head: UInt64, outcomes: [ChangeOutcome]) {
    self.head = head
    self.outcomes = outcomes
  }

  package init(head: UInt64, outcomes: [ChangeOutcome], resent: Int) {
    self.init(head: head, outcomes: outcomes)
    self.resent = resent
  }

  /// The same answer: its head and outcomes (a resend's is the first's).
  public static func == (a: PushAnswer, b: PushAnswer) -> Bool { a.head == b.head && a.outcomes == b.outcomes }
}

/// A page of a remote's records, in seq order from the one asked for.
public struct RecordPage: Equatable, Sendable {
  public var head: UInt64
  public var records: [[UInt8]]
  /// The records' events, when the page was checked as it arrived
  /// (`PulledPage`); nil: checked when it is taken in.
  package var events: [Event]?

  public init(head: UInt64, records: [[UInt8]]) {
    self.head = head
    self.records = records
  }

  package init(head: UInt64, checked page: PulledPage) {
    self.head = head
    records = page.records
    events = page.events
  }
}
