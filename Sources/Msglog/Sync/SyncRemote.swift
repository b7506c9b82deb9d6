/// The log a replica syncs with, as the replica sees it: the sync
/// protocol's three calls (`SyncProtocol`), the same over HTTP (`msglog
/// serve`'s sync routes) as on a log opened in process (a `postgres://`
/// location). docs/SYNC.md, "The protocol".
package protocol SyncRemote: AnyObject {
  /// The remote's location as messages show it (credentials redacted).
  var shown: String { get }
  /// What the remote says first: its protocol, its log's id, its head.
  func hello() throws -> RemoteHello
  /// Has the remote do the request's changes of its replica (in order,
  /// each at most once), once its secret proves the replica is itself.
  func push(_ request: PushRequest) throws -> PushAnswer
  /// The remote's records after the request's seq, a bounded page, once
  /// it has checked that its record at that seq is the one the replica has.
  func pull(_ request: PullRequest) throws -> RecordPage
  /// A trimmed remote's bases (its hello names its horizon), for a replica
  /// that starts from them; checked to be of the log `log`.
  func bases(of log: ItemID) throws -> [ImportedBase]
  /// Waits until the remote's head passes `seq`, at most `seconds`, or
  /// until one of `stop` signals; true when it passed. Woken by the
  /// remote's commits, the descriptors or the time only.
  func waitForEvents(after seq: UInt64, seconds: Double, stop: [FollowStop]) throws -> Bool
  /// A run begins (a clone, a sync, a round of a live sync): the calls
  /// after it share its bound (`SyncOptions.timeout`) where the remote has
  /// one.
  func startRun()
  /// What ends the exchange under way at once, and every one after (a live
  /// sync stopped while the remote stalls: they fail as cut); called from
  /// another thread.
  var canceller: @Sendable () -> Void { get }
}

extension SyncRemote {
  package func startRun() {}
  package var canceller: @Sendable () -> Void { {} }

  /// The remote's record at `seq`, read unchecked (a pull of one record
  /// after `seq - 1`), and its event; nil when it sends none, or one that
  /// is not that seq's event (each caller says what that means).
  func record(at seq: UInt64, of log: ItemID) throws -> (bytes: [UInt8], event: Event)? {
    let page = try pull(PullRequest(log: log, after: seq - 1, check: nil, limit: 1))
    guard let record = page.records.first, let event = try? EventRecord.decode(record), event.seq == seq else {
      return nil
    }
    return (record, event)
  }
}
