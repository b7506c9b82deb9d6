import MsglogCore

/// Wakes a follower on a server where `LISTEN` is not available — a hot
/// standby, which replays the primary's commits but cannot deliver its
/// notifications — by asking for the head seq on a connection of its own.
///
/// The interval adapts: 5 ms after the head moved, doubling while it
/// stays, up to 100 ms, so a quiet log costs ten one-row queries a second
/// and a commit is seen within about 100 ms of being replayed. The
/// connection's socket is still watched: a server that goes away makes it
/// readable, and the next `drain()` says the connection is lost.
final class HeadPoller: CommitWatcher {
  let connection: Connection
  /// The location as messages show it.
  let shown: String
  private var lastHead: UInt64
  /// The head the last drain read, when it moved (see `takeAnnouncedHead`).
  private var announced: UInt64?
  private(set) var pollInterval: Int32 = HeadPoller.quickest

  static let quickest: Int32 = 5
  static let slowest: Int32 = 100

  init(conninfo: String, shown: String) throws {
    connection = try Connection(conninfo)
    self.shown = shown
    lastHead = 0
    lastHead = try head()
  }

  var fileDescriptor: Int32 { connection.socket }

  /// Whether the head moved since the last look.
  func drain() throws -> Bool {
    let now = try head()
    guard now != lastHead else {
      pollInterval = min(pollInterval * 2, Self.slowest)
      return false
    }
    lastHead = now
    announced = now
    pollInterval = Self.quickest
    return true
  }

  /// The head the poll just read: a follower of the head need not read it
  /// again (the same statement as `PostgresStore.committedHead`, on a
  /// server whose schema was there when this poller was made).
  func takeAnnouncedHead() -> UInt64? {
    defer { announced = nil }
    return announced
  }

  private func head() throws -> UInt64 {
    do {
      // Read what the server sent unasked first (a notice, or why it is
      // closing the connection), so the socket does not stay readable.
      _ = try connection.notifications()
      return try connection.execute(PostgresSchema.headSeq.sql).uint64(0, 0) ?? 0
    } catch {
      if error.isConnectionLost { throw MsglogError.connectionLost(location: shown, reason: error.message) }
      if error.isRecoveryConflictOnRead { throw MsglogError.readCancelled(location: shown, reason: error.message) }
      throw MsglogError.storeFailure(store: .postgres, detail: error.message)
    }
  }
}
