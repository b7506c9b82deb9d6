import MsglogLMDB
import MsglogPostgres
import Synchronization

/// An event log of ordered message lists: the one object an app, the
/// command line, the server, the tests and the benchmark open.
///
///     let log = try EventLog("chat.lmdb")
///     let chat = log.stream("chat")
///     let hello = try chat.append("Morning! Review at 11?", sender: "ann")
///     try chat.move(from: 0, to: 1)
///     for item in try chat.items().items { print(item.text) }
///
/// One stream's methods are on its handle, `stream(_:)`, with no stream
/// label to repeat; the log's own methods take the stream as their last
/// label (`to:`, `into:`, `from:`, `in:`, `of:`) and default to `main`.
///
/// Every operation is a method; transactions, derived tables, map growth
/// and the atomic creation of a new database are the log's own business.
/// One `EventLog` may be shared by any number of threads: reads run in
/// snapshots of their own, writes are serialised (across processes too),
/// and a map that must grow waits for the threads' open transactions.
///
/// Errors are `MsglogError`s, whose cases a program can switch on (the
/// stores' own failures are worded once, here); the methods that take a
/// closure also pass on what the closure throws. They are declared
/// `throws`, not `throws(MsglogError)`: Swift 6.3's compiler crashes on a
/// `catch MsglogError.someCase` after a typed throw in a function that
/// also calls a closure-taking method (swiftlang/swift#89787, #89577), and
/// the door must not break its callers' builds.
///
/// ## Topics
///
/// ### Opening a log
///
/// - ``init(_:configuration:)``
/// - ``inMemory(configuration:)``
/// - ``Configuration``
/// - ``configuration``
/// - ``location``
/// - ``initialize()``
/// - ``LogInitialization``
///
/// ### One stream
///
/// - ``stream(_:)``
/// - ``LogStream``
///
/// ### Writing
///
/// - ``append(_:sender:id:to:expectVersion:)``
/// - ``insert(_:at:sender:id:into:expectVersion:rebase:)``
/// - ``move(from:to:in:expectVersion:rebase:)``
/// - ``remove(_:from:expectVersion:rebase:)``
/// - ``remove(id:from:expectVersion:rebase:)``
/// - ``append(contentsOf:to:expectVersion:progress:)``
/// - ``insert(contentsOf:at:into:expectVersion:rebase:progress:)``
/// - ``perform(_:expectVersion:rebase:progress:)``
/// - ``importLines(_:defaultStream:progress:)``
/// - ``importLines(contentsOf:defaultStream:progress:)``
///
/// ### Working together
///
/// - ``edit(_:text:sender:in:expectVersion:rebase:)``
/// - ``edit(id:text:sender:in:expectVersion:rebase:)``
/// - ``restore(_:at:in:expectVersion:)``
/// - ``restore(id:at:in:expectVersion:)``
/// - ``undo(_:in:sender:expectVersion:)``
///
/// ### Reading
///
/// - ``items(of:)``
/// - ``replay(_:at:)``
/// - ``streams()``
/// - ``headSeq()``
/// - ``events(from:limit:stream:)``
/// - ``export(stream:_:)``
/// - ``diff(_:from:to:)``
/// - ``read(_:)``
/// - ``LogSnapshot``
/// - ``readsWithoutLock``
///
/// ### Following
///
/// - ``updates(from:)``
/// - ``changes(from:stream:)``
/// - ``follow(from:stream:)``
/// - ``follow(from:stream:stop:notices:_:)``
/// - ``FollowStop``
/// - ``FollowNotice``
///
/// ### Checking and mending
///
/// - ``verify()``
/// - ``repair()``
/// - ``RepairReport``
/// - ``backup(to:compact:)``
/// - ``BackupReport``
public final class EventLog: Sendable {
  /// Where the log lives: the path as given, the URL as libpq parsed it
  /// without its password (safe to show anywhere), or `(memory)`.
  public let location: String
  /// How the log was opened.
  public let configuration: Configuration
  package let store: any EventStore
  /// Writes from this process's threads, committed together.
  let commits = CommitQueue<WriteBatch, [Outcome?]>(batchLimit: 256)
  /// How many of the group commit's transactions were sent while another
  /// was still committing (`CommitQueue`): none on LMDB.
  package var overlappedCommits: Int { commits.overlapped }
  /// Whether the log is a replica, once a read or write has seen (a log
  /// never becomes one in place, nor stops being one).
  let replicaKnown = Mutex<Bool?>(nil)
  /// Told of each transaction of the group commit (the server\'s metrics).
  package let commitObservers = CommitObserverSlot()

  /// Opens the log at `location`: a directory path for LMDB (created by the
  /// first write if missing), or a PostgreSQL URL —
  /// `postgres://user@host:port/dbname?sslmode=require` (also
  /// `postgresql://`, in any case), with libpq's environment (PGHOST, PGUSER,
  /// PGPASSWORD, PGSERVICE, PGSSLMODE, …) filling in what it leaves out; its
  /// tables are created by the first write. What libpq reads as a password is
  /// never shown in any message, nor in `location`.
  ///
  /// Nothing is read until the first operation: a missing database is an
  /// error of that operation (a write creates it).
  public init(_ location: String, configuration: Configuration = Configuration()) throws {
    guard !location.isEmpty else { throw MsglogError.cannotRead(location: "''", reason: "the location is empty") }
    if PostgresStore.handles(location) {
      let store = try PostgresStore(location: location)
      self.location = store.shown
      self.store = store
    } else {
      self.location = location
      self.store = LMDBStore(
        path: location, access: configuration.access, assertionHandler: configuration.lmdbAssertionHandler)
    }
    self.configuration = configuration
  }

  package init(store: any EventStore, location: String, configuration: Configuration) {
    self.location = location
    self.store = store
    self.configuration = configuration
  }

  /// A log in memory, gone with the object: the twin of the stores on disk
  /// (the same validation, records and derived tables, in values), for
  /// fast tests of code that uses a log.
  public static func inMemory(configuration: Configuration = Configuration()) -> EventLog {
    EventLog(store: MemoryStore(), location: "(memory)", configuration: configuration)
  }

  /// Whether reads go without a lock because the database may only be read
  /// by this user: a read's `body` may then run more than once, and a caller
  /// that streams output should hold it back until the read returns.
  ///
  /// Why it shows: LMDB takes a read's place in its lock file, which such a
  /// user cannot write, so the read runs without one and runs again when a
  /// commit raced it (`read(_:)`). What `body` did on the first run — the
  /// lines it printed — the log cannot take back, and holding every read's
  /// output back would cost memory for the reads that need none of it
  /// (`list` of a million items streams its lines). So the log says when,
  /// and a caller holds back only then.
  public var readsWithoutLock: Bool { store.readsWithoutLock }

  // MARK: - Transactions

  /// Runs `body` in a read-only snapshot of the log.
  ///
  /// Errors of the log are `MsglogError`s; what `body` throws passes through
  /// as it is.
  ///
  /// - Warning: the snapshot is valid only inside `body` (LMDB's pages are
  ///   lent, not copied); on a log read without a lock, `body` may run again
  ///   after a commit raced it.
  public func read<R>(_ body: (borrowing LogSnapshot) throws -> R) throws -> R {
    do {
      return try readingStore(body)
    } catch {
      throw MsglogError(storeFailure: error) ?? error
    }
  }

  /// Runs `body` in a read-only snapshot, for the reads whose closures
  /// throw nothing of their own: every error is a `MsglogError`.
  func reading<R>(_ body: (borrowing LogSnapshot) throws -> R) throws(MsglogError) -> R {
    do {
      return try readingStore(body)
    } catch {
      throw MsglogError(anyStoreFailure: error)
    }
  }

  /// Runs `body` in a snapshot of the store, or of an empty log when the
  /// database does not exist yet and the configuration reads that as empty
  /// (`Configuration.readsMissingDatabaseAsEmpty`): nothing is created.
  /// Only the store's own `noDatabase` counts — one thrown before `body`
  /// ran; what `body` throws passes through.
  private func readingStore<R>(_ body: (borrowing LogSnapshot) throws -> R) throws -> R {
    var entered = false
    do {
      return try store.read { reader in
        entered = true
        return try withSnapshot(of: reader, body)
      }
    } catch MsglogError.noDatabase where !entered && configuration.readsMissingDatabaseAsEmpty {
      return try MemoryStore().read { reader in try body(LogSnapshot(reader: reader)) }
    }
  }

  /// Runs validated commands in one write transaction: committed durably when
  /// `body` returns, rolled back when it throws, with the derived tables
  /// brought up to date in the same transaction (that cannot be forgotten).
  ///
  /// - Parameter sent: called once the commit is on its way to a store
  ///   across a network and the next write may begin (`CommitQueue`).
  func write<R>(
    reserving bytes: Int = 0, touching streams: [StreamName] = [], whenSent sent: () -> Void = {},
    _ body: (LedgerSession) throws -> R
  ) throws(MsglogError) -> R {
    try checkWritable()
    do {
      return try store.write(reserving: bytes, touching: streams, whenSent: sent) { writer in
        // A store with a clock of its own (a server's) dates the events.
        let session = try LedgerSession(
          writer: writer, now: writer.commitTime ?? configuration.clock(),
          checkpointInterval: UInt64(configuration.checkpointInterval))
        let result = try body(session)
        try session.finish()
        return result
      }
    } catch {
      throw MsglogError(anyStoreFailure: error)
    }
  }

  /// A write transaction of the store itself, for what is not a command (a repair).
  func writing<R>(_ body: (any LogWriter) throws -> R) throws(MsglogError) -> R {
    try checkWritable()
    do {
      return try store.write(body)
    } catch {
      throw MsglogError(anyStoreFailure: error)
    }
  }

  private func checkWritable() throws(MsglogError) {
    guard configuration.access == .readWrite else {
      throw .readOnly(location: location, store: store.kind, reason: "opened for reading only")
    }
  }
}
