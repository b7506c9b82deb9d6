import MsglogCore

extension PostgresStore {
  /// What this process knows of the log as its own last write left it: the
  /// head, the heads, last events and order-tree nodes of the streams that
  /// write touched, and the server's clock.
  ///
  /// A write that finds everything it reads here needs no round trip before
  /// its commit: it validates against this, and its commit pipeline opens
  /// with a check that the head row is still as that write left it
  /// (`PostgresSchema.lockHead(ifAt:version:)`): after another writer's
  /// commit it fails (`HeadMoved`), and nothing is written. Then the write
  /// runs again the ordinary way, and this is forgotten. Kept a few seconds at most, so
  /// the clock is read again now and then.
  struct KnownState {
    var head: UInt64
    /// The head row's version (its xmin) as that write left it.
    var headVersion: String
    /// The heads, last events and order-tree nodes that write read or wrote.
    var streams: StreamCache
    /// The log's horizon (`Access+Trim`): a trim moves the head row too,
    /// so a write on this that a trim came after fails its lock's check.
    var horizon: Horizon
    /// The time of the log's last event: a new one is never earlier.
    var lastTime: Timestamp
    /// The server's clock when last read, and when that was on this machine's monotonic clock.
    var serverClock: Timestamp
    var readAt: ContinuousClock.Instant
    /// Whether the write that left it has committed, or is committing.
    var standing = Standing.committed

    /// Whether the write that left what is known is durable yet.
    enum Standing {
      case committed
      /// Everything but its `COMMIT` answered (the server is flushing it):
      /// the next write may be built on it, sent behind it and wait at the
      /// head row's lock for that commit; if it fails, the lock's check
      /// fails too, and the next write is decided again.
      case committing
    }

    /// How long what is known is used before the ordinary way reads it afresh.
    static let lifetime = Duration.seconds(5)
    /// The most order-tree nodes kept.
    static let nodeLimit = 4096

    /// Whether a write on `touched` finds what it reads first here.
    func covers(_ touched: [StreamName]) -> Bool {
      !touched.isEmpty && ContinuousClock.now - readAt < Self.lifetime
        && touched.allSatisfy { streams.heads[$0] != nil && streams.last[$0] != nil }
    }

    /// The server's clock now, from its reading and the time passed since
    /// on this machine's monotonic clock (so a step of this machine's wall
    /// clock changes nothing), never earlier than the last event.
    var time: Timestamp {
      let passed = ContinuousClock.now - readAt
      let now =
        serverClock.milliseconds + passed.components.seconds * 1000
        + passed.components.attoseconds / 1_000_000_000_000_000
      return Timestamp(milliseconds: max(now, lastTime.milliseconds))
    }
  }
}
