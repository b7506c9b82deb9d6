import MsglogCore

/// The sync protocol (docs/SYNC.md, "The protocol"): three calls a replica
/// makes of its remote — a hello, a push, a pull — typed once here and used
/// by both ends: `msglog serve`'s routes, the library's HTTP remote, and a
/// remote the library opens in process (a `postgres://` log). Each message
/// is a type with its one encoding and its one decoding: `RemoteHello`,
/// `PushRequest` and `PushAnswer` (with each change's outcome),
/// `PullRequest` and its page of `RecordFrames` (checked as it arrives by
/// `PulledPage`), and `SyncRefusal`, a call refused whole.
package enum SyncProtocol {
  /// The version this msglog speaks; a side that does not know the other's refuses.
  package static let version = 1

  /// Whether this msglog can answer, or be answered by, a peer of `version`
  /// (the one check both ends make: an older peer is spoken to, a newer one
  /// is refused with one line naming the two versions).
  package static func speaks(_ peer: some BinaryInteger) -> Bool { peer <= version }

  // MARK: - Routes

  /// The hello: `GET /api/sync?protocol=N`.
  package static let helloPath = "/api/sync"
  /// The push: `POST /api/sync/push`, a `PushRequest`.
  package static let pushPath = "/api/sync/push"
  /// The pull: `GET /api/sync/pull?…`, a `PullRequest`.
  package static let pullPath = "/api/sync/pull"
  /// A trimmed log's bases, as `export`'s base lines (`?log=ID`).
  package static let basesPath = "/api/sync/bases"
  /// The most a replica reads of a remote's bases: each holds a stream's
  /// whole list (about 150 bytes an item).
  package static let basesBytes = 1 << 30

  /// The hello a replica sends: its protocol.
  package static var helloTarget: String { helloPath + "?protocol=\(version)" }

  /// The header of a pull's answer that gives the remote's head.
  package static let headHeader = "Msglog-Head"

  // MARK: - Bounds

  /// The changes a push carries at most, and their bytes (past one change).
  package static let pushChanges = 256
  package static let pushBytes = 768 * 1024
  /// The records a pull's page holds at most, and its bytes (past one record).
  package static let pageRecords = 4096
  package static let pageBytes = 1 << 20
  /// The longest answer to a hello or a push a replica reads, in bytes
  /// (256 outcomes and their reasons fit many times over).
  package static let answerBytes = 4 << 20
}
