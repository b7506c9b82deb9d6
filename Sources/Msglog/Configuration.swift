extension EventLog {
  /// How a log is opened, set before opening it (GRDB's `Configuration`).
  ///
  ///     var configuration = EventLog.Configuration()
  ///     configuration.access = .readOnly
  ///     let log = try EventLog("chat.lmdb", configuration: configuration)
  public struct Configuration: Sendable {
    /// Reads and writes (the default; the first write creates a missing
    /// database), or reads only, which never creates anything and needs no
    /// write permission.
    public var access: LogAccess

    /// The time recorded in new events (tests set their own).
    public var clock: @Sendable () -> Timestamp

    /// A stream gets a checkpoint, which `replay(_:at:)` starts from, once
    /// it has had this many events (and as many as it had items) since its
    /// last one. At least 1.
    public var checkpointInterval: Int {
      didSet { precondition(checkpointInterval >= 1, "a checkpoint interval is at least 1") }
    }

    /// Called when one of LMDB's own consistency checks fails inside a read
    /// or write, with whether the database was read without its lock file
    /// (read-only to this user, where a concurrent commit can change pages
    /// under a read) and LMDB's words. LMDB aborts the process when the
    /// handler returns, so the command line prints its own message and
    /// exits here. Nil keeps LMDB's own: print the check and abort. Not used
    /// on PostgreSQL. The command line's and the server's business, not an
    /// app's: an app gets what every LMDB program gets.
    package var lmdbAssertionHandler: (@Sendable (_ lockless: Bool, _ message: String) -> Void)? = nil

    public init(
      access: LogAccess = .readWrite, clock: @escaping @Sendable () -> Timestamp = Timestamp.now,
      checkpointInterval: Int = 256
    ) {
      precondition(checkpointInterval >= 1, "a checkpoint interval is at least 1")
      self.access = access
      self.clock = clock
      self.checkpointInterval = checkpointInterval
    }

    /// The configuration of this package's programs, which word LMDB's
    /// failed checks themselves.
    package init(
      access: LogAccess = .readWrite,
      lmdbAssertionHandler: (@Sendable (_ lockless: Bool, _ message: String) -> Void)?
    ) {
      self.init(access: access)
      self.lmdbAssertionHandler = lmdbAssertionHandler
    }
  }
}
