/// A remote that is a log this process opens itself (a `postgres://`
/// location): the sync protocol's calls made in process, in the remote's
/// own transactions — the same exactly-once as `msglog serve` gives.
package final class LogRemote: SyncRemote {
  let log: EventLog

  package init(_ log: EventLog) { self.log = log }

  package var shown: String { log.location }

  package func hello() throws -> RemoteHello { try log.syncHello() }

  package func push(_ changes: [ReplicaChange], replica: ItemID, secret: ReplicaSecret, log id: ItemID) throws
    -> PushAnswer
  {
    try log.doChanges(changes, by: replica, secret: secret, log: id)
  }

  package func pull(after seq: UInt64, check: UInt32?, log id: ItemID, limit: Int) throws -> RecordPage {
    var records: [[UInt8]] = []
    let head = try log.records(after: seq, check: check, log: id, limit: limit) { _, bytes in
      records.append(Array(bytes))
    }
    return RecordPage(head: head, records: records)
  }

  package func waitForEvents(after seq: UInt64, seconds: Double, stop: @escaping @Sendable () -> Bool) throws -> Bool {
    let waiter = CommitWaiter(log: log, after: seq, stop: stop)
    return try waiter.wait(seconds: seconds)
  }
}
