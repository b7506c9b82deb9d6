import MsglogPosix
/// A remote that is a log this process opens itself (a `postgres://`
/// location): the sync protocol's calls made in process, in the remote's
/// own transactions — the same messages, the same exactly-once as `msglog
/// serve` gives.
package final class LogRemote: SyncRemote {
  let log: EventLog

  package init(_ log: EventLog) { self.log = log }

  package var shown: String { log.location }

  package func hello() throws -> RemoteHello { try log.syncHello() }

  package func push(_ request: PushRequest) throws -> PushAnswer { try log.doChanges(request) }

  /// A page checked record by record as it is read (`PulledPage`), as
  /// one from a server is.
  package func pull(_ request: PullRequest) throws -> RecordPage {
    var page = PulledPage(after: request.after, limit: request.limit, pageBytes: SyncProtocol.pageBytes)
    do {
      let head = try log.records(request) { _, bytes in try page.take(Array(bytes)) }
      try page.check(head: head)
      return RecordPage(head: head, checked: page)
    } catch let fault as RemoteFault {
      throw MsglogError.remoteFault(remote: shown, fault)
    }
  }

  package func bases(of log: ItemID) throws -> [ImportedBase] { try self.log.syncBases(log: log) }

  /// Follows the remote log from the next seq, as `follow` does (woken by
  /// its store), until its first event, a `stop`, or the time is up.
  package func waitForEvents(after seq: UInt64, seconds: Double, stop: [FollowStop]) throws -> Bool {
    let timeUp = try MsglogPosix.WakePipe.made()
    let bound = try WaitBound(seconds: seconds, stops: []) { timeUp.signal() }
    defer { bound.finish() }
    var arrived = false
    try log.follow(from: seq + 1, stop: stop + [timeUp.stop]) { _ in
      arrived = true
      return false
    }
    return arrived
  }
}
