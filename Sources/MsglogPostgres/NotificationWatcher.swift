import MsglogCore

/// Wakes a follower when any client commits: a connection of its own that
/// `LISTEN`s on msglog's channel; its socket becomes readable on a notification.
final class NotificationWatcher: CommitWatcher {
  let connection: Connection
  /// The location as messages show it.
  let shown: String

  init(conninfo: String, shown: String) throws {
    connection = try Connection(conninfo)
    self.shown = shown
    try connection.execute(PostgresSchema.listen.sql)
  }

  var fileDescriptor: Int32 { connection.socket }

  /// A notification says a commit happened; a wake without one (a notice)
  /// says nothing, and a connection the server closed is lost.
  func drain() throws -> Bool {
    do {
      return try !connection.notifications().isEmpty
    } catch {
      throw MsglogError.connectionLost(location: shown, reason: error.message)
    }
  }
}
