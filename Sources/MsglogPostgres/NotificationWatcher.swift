import MsglogCore

/// Wakes a follower when any client commits: a connection of its own that
/// `LISTEN`s on msglog's channel; its socket becomes readable on a notification.
///
/// A notification carries the head its commit left
/// (`PostgresSchema.notifyAfterCommit`), but anyone who may connect can
/// `NOTIFY` on the channel, with any words. A head is taken from one only
/// when this process has itself committed a head at least as high
/// (`committedHere`): it is then durable, whoever sent it, and a follower
/// of the head (`serve`'s commit hub) need not read it — a statement each
/// commit of its own saves. A higher one (another process's commit, or a
/// lie) or one that is not a seq only says "look", and the head is read.
final class NotificationWatcher: CommitWatcher {
  let connection: Connection
  /// The location as messages show it.
  let shown: String
  /// The highest head this process's own commits left, durable.
  private let committedHere: @Sendable () -> UInt64
  /// What the last drain's notifications announced (`takeAnnouncedHead`).
  private var announced: UInt64?

  init(conninfo: String, shown: String, committedHere: @escaping @Sendable () -> UInt64) throws {
    connection = try Connection(conninfo)
    self.shown = shown
    self.committedHere = committedHere
    try connection.execute(PostgresSchema.listen.sql)
  }

  var fileDescriptor: Int32 { connection.socket }

  /// A notification says a commit happened; a wake without one (a notice)
  /// says nothing, and a connection the server closed is lost.
  func drain() throws -> Bool {
    let payloads: [String]
    do {
      payloads = try connection.notifications()
    } catch {
      throw MsglogError.connectionLost(location: shown, reason: error.message)
    }
    announced = Self.announcedHead(of: payloads, upTo: committedHere())
    return !payloads.isEmpty
  }

  /// The head the last drain's notifications announced, when it can be
  /// taken (see the type); nil otherwise. Taken once.
  func takeAnnouncedHead() -> UInt64? {
    defer { announced = nil }
    return announced
  }

  /// The highest head `payloads` announce, if every one is a seq written
  /// as msglog writes it (digits, no sign, no leading zero) no higher than
  /// `limit`; nil otherwise, or for none.
  static func announcedHead(of payloads: [String], upTo limit: UInt64) -> UInt64? {
    var head: UInt64? = nil
    for payload in payloads {
      guard let seq = UInt64(payload), String(seq) == payload, seq <= limit else { return nil }
      head = max(head ?? 0, seq)
    }
    return head
  }
}
