import MsglogCore

/// Wakes a follower when any client commits: a connection of its own that
/// `LISTEN`s on msglog's channel; its socket becomes readable on a notification.
final class NotificationWatcher: CommitWatcher {
  let connection: Connection
  /// The location as messages show it.
  let shown: String
  /// The sessions whose notifications are this process's own commits.
  private let own: OwnSessions
  /// The head the last drain's notifications announced, when all were this
  /// process's own (see `takeAnnouncedHead`).
  private var announced: UInt64?

  init(conninfo: String, shown: String, own: OwnSessions) throws {
    connection = try Connection(conninfo)
    self.shown = shown
    self.own = own
    try connection.execute(PostgresSchema.listen.sql)
  }

  var fileDescriptor: Int32 { connection.socket }

  /// A notification says a commit happened; a wake without one (a notice)
  /// says nothing, and a connection the server closed is lost.
  func drain() throws -> Bool {
    let received: [Connection.Notification]
    do {
      received = try connection.notifications()
    } catch {
      throw MsglogError.connectionLost(location: shown, reason: error.message)
    }
    announced = Self.ownHead(received, own)
    return !received.isEmpty
  }

  /// A server whose only writer is this process (`serve`) hears its own
  /// commits here: their head is taken as announced, and a follower of the
  /// head (the server's commit hub) reads nothing — a statement a commit
  /// saved. Any notification of another session (another process's
  /// commit, or anyone's `NOTIFY`, which any role that may connect can
  /// send) leaves the head to be read.
  func takeAnnouncedHead() -> UInt64? {
    defer { announced = nil }
    return announced
  }

  /// The highest head of `received`, if every one of them is a commit of
  /// `own`'s sessions; nil otherwise, or for none.
  static func ownHead(_ received: [Connection.Notification], _ own: OwnSessions) -> UInt64? {
    var head: UInt64? = nil
    for notification in received {
      guard own.contains(notification.sender), let seq = UInt64(notification.payload) else { return nil }
      head = max(head ?? 0, seq)
    }
    return head
  }
}
