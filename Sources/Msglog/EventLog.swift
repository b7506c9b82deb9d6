@_exported import MsglogCore
import MsglogLMDB
import MsglogPostgres

#if canImport(Glibc)
  import Glibc
#endif

/// An event log of ordered message lists: the one object an app, the
/// command line, the server, the tests and the benchmark open.
///
///     let log = try EventLog("chat.lmdb")
///     let hello = try log.append("Morning! Review at 11?", sender: "ann")
///     try log.move(from: 0, to: 1)
///     for item in try log.items().items { print(item.text) }
///
/// Every operation is a method; transactions, derived tables, map growth
/// and the atomic creation of a new database are the log's own business.
/// One `EventLog` may be shared by any number of threads: reads run in
/// snapshots of their own, writes are serialised (across processes too),
/// and a map that must grow waits for the threads' open transactions.
///
/// Errors are `MsglogError`s, whose cases a program can switch on.
public final class EventLog: Sendable {
  public enum Access: Sendable {
    /// Reads and writes; the first successful write creates a missing database.
    case readWrite
    /// Reads only: never creates anything and needs no write permission.
    case readOnly
  }

  /// Where the log lives: the path as given, or the URL as libpq parsed it,
  /// without its password (safe to show anywhere).
  public let location: String
  let store: any EventStore & Sendable
  let clock: @Sendable () -> Timestamp
  /// A stream gets a checkpoint once it has had this many events (and as
  /// many as it had items) since its last one.
  let checkpointInterval: UInt64
  /// Writes from this process's threads, committed together.
  let commits = CommitQueue<PendingWrite, [Outcome?]>(batchLimit: 256)

  /// Opens the log at `location`: a directory path for LMDB (created by the
  /// first write if missing), or a PostgreSQL URL —
  /// `postgres://user@host:port/dbname?sslmode=require` (also
  /// `postgresql://`, in any case), with libpq's environment (PGHOST, PGUSER,
  /// PGPASSWORD, PGSERVICE, PGSSLMODE, …) filling in what it leaves out; its
  /// tables are created by the first write. What libpq reads as a password is
  /// never shown in any message, nor in `location`.
  ///
  /// - Parameters:
  ///   - clock: the time recorded in new events (tests inject their own).
  public init(
    _ location: String, access: Access = .readWrite, clock: @escaping @Sendable () -> Timestamp = Timestamp.now,
    checkpointInterval: UInt64 = 256
  ) throws {
    guard !location.isEmpty else { throw MsglogError.cannotRead(location: location, reason: "the location is empty") }
    if PostgresStore.handles(location) {
      let store = try PostgresStore(location: location)
      self.location = store.shown
      self.store = store
    } else {
      self.location = location
      self.store = LMDBLog(path: location, access: access == .readOnly ? .readOnly : .readWrite)
    }
    self.clock = clock
    self.checkpointInterval = checkpointInterval
  }

  /// A log over a store of your own (an in-memory `MemoryStore` for fast
  /// tests of logic; the stores msglog ships are reached by location).
  public init(
    store: any EventStore & Sendable, clock: @escaping @Sendable () -> Timestamp = Timestamp.now,
    checkpointInterval: UInt64 = 256
  ) {
    self.location = "(memory)"
    self.store = store
    self.clock = clock
    self.checkpointInterval = checkpointInterval
  }

  /// Whether reads go without a lock because the database may only be read
  /// by this user: a read's `body` may then run more than once, and a caller
  /// that streams output should hold it back until the read returns.
  public var readsWithoutLock: Bool { (store as? LMDBLog)?.readsWithoutLock ?? false }

  // MARK: - Transactions

  /// Runs `body` in a read-only snapshot of the log.
  ///
  /// - Warning: the snapshot is valid only inside `body` (LMDB's pages are
  ///   lent, not copied); on a log read without a lock, `body` may run again
  ///   after a commit raced it.
  public func read<R>(_ body: (borrowing LogSnapshot) throws -> R) throws -> R {
    try store.read { reader in try body(LogSnapshot(reader: reader)) }
  }

  /// Runs validated commands in one write transaction: committed durably when
  /// `body` returns, rolled back when it throws, with the derived tables
  /// brought up to date in the same transaction (that cannot be forgotten).
  func write<R>(reserving bytes: Int = 0, touching streams: [StreamName] = [], _ body: (LedgerSession) throws -> R)
    throws -> R
  {
    try store.write(reserving: bytes, touching: streams) { writer in
      // A store with a clock of its own (a server's) dates the events.
      let session = try LedgerSession(
        writer: writer, now: writer.commitTime ?? clock(), checkpointInterval: checkpointInterval)
      let result = try body(session)
      try session.finish()
      return result
    }
  }
}

extension Timestamp {
  /// The current UTC time, to the millisecond.
  public static func now() -> Timestamp {
    var spec = timespec()
    clock_gettime(CLOCK_REALTIME, &spec)
    return Timestamp(milliseconds: Int64(spec.tv_sec) * 1000 + Int64(spec.tv_nsec) / 1_000_000)
  }
}

extension EventLog {
  /// Called when one of LMDB's own consistency checks fails inside a read
  /// or write; LMDB aborts the process when it returns, so a program that
  /// wants a clear message and exit code prints and exits here. `lockless`:
  /// the database was read without its lock file (read-only to this user),
  /// where a concurrent commit can change pages under a read; otherwise it
  /// is damaged.
  nonisolated(unsafe) public static var lmdbAssertionHandler: ((_ lockless: Bool, _ message: String) -> Void)? {
    get { LMDBAssertion.handler }
    set { LMDBAssertion.handler = newValue }
  }
}
