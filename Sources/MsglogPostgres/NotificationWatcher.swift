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
///
/// A commit whose writer died between its `COMMIT` and the notification
/// behind it (`kill -9`) announces nothing: so a watcher of a log's commits
/// also reads the head itself after a second without a notification, and
/// wakes its follower if it moved — a stream of `serve` waits a second at
/// most for such a commit, not for the next write.
final class NotificationWatcher: CommitWatcher {
  let connection: Connection
  /// The location as messages show it.
  let shown: String
  /// The highest head this process's own commits left, durable.
  private let committedHere: @Sendable () -> UInt64
  /// What the last drain's notifications announced (`takeAnnouncedHead`).
  private var announced: UInt64?
  /// Reads the head as committed (nil: a watcher of the log's creation,
  /// which has no head to read). On a pooled connection, not the listening
  /// one: that one only ever listens, as `pg_stat_activity` shows it
  /// (`LISTEN msglog`), and a notification can never arrive with a
  /// query's answer and be left unseen by the socket.
  private let readHead: (() throws -> UInt64)?
  /// The head as last read here.
  private var lastHead: UInt64 = 0
  /// When the head was last read here, or a notification last came.
  private var lastLook = ContinuousClock.now

  /// How long without a notification before the head is read, in ms.
  static let lookInterval: Int32 = 1000

  /// `head`: the head as its maker read it (with `readHead`).
  init(
    conninfo: String, shown: String, head: UInt64 = 0, readHead: (() throws -> UInt64)?,
    committedHere: @escaping @Sendable () -> UInt64
  ) throws {
    connection = try Connection(conninfo)
    self.shown = shown
    self.readHead = readHead
    self.committedHere = committedHere
    lastHead = head
    try connection.execute(PostgresSchema.listen.sql)
  }

  var fileDescriptor: Int32 { connection.socket }

  var pollInterval: Int32 { readHead == nil ? -1 : Self.lookInterval }

  /// A notification says a commit happened; a wake without one (a notice)
  /// says nothing, and a connection the server closed is lost. A second
  /// without one, the head is read: a move is a commit nobody announced.
  func drain() throws -> Bool {
    let payloads: [String]
    do {
      payloads = try connection.notifications()
    } catch {
      throw MsglogError.connectionLost(location: shown, reason: error.message)
    }
    let now = ContinuousClock.now
    if !payloads.isEmpty {
      lastLook = now
      announced = Self.announcedHead(of: payloads, upTo: committedHere())
      if let announced { lastHead = max(lastHead, announced) }
      return true
    }
    guard let readHead, now - lastLook >= .milliseconds(Self.lookInterval) else { return false }
    lastLook = now
    let head = try readHead()
    defer { lastHead = head }
    guard head != lastHead else { return false }
    announced = head
    return true
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
