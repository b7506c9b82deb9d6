/// A place that keeps a log: serialised write transactions, snapshot reads,
/// shared by any number of threads.
///
/// A store words its engine's failures itself, as `MsglogError`s that say
/// which store they came from (`MsglogError.Store`); damage found in
/// derived rows may escape it as `DerivedDamage`, which `EventLog` turns
/// into a `MsglogError`.
package protocol EventStore: AnyObject, Sendable {
  /// Runs `body` in a read-only snapshot of the store.
  func read<R>(_ body: (any LogReader) throws -> R) throws -> R
  /// Runs `body` in a write transaction: committed (durably) when it returns,
  /// rolled back when it throws. Writers are serialised, so `headSeq()` does not
  /// move under `body`. `body` may be run again if the backend needs to retry.
  ///
  /// - Parameters:
  ///   - bytes: an estimate of what the write adds, so that a store can
  ///     make room once rather than retry a large batch on every growth.
  ///   - streams: the streams the write touches (none: not known), so that
  ///     a store across a network can fetch their state with the
  ///     transaction's first round trip; a local store has no use for it.
  func write<R>(reserving bytes: Int, touching streams: [StreamName], _ body: (any LogWriter) throws -> R) throws -> R
  /// `write(reserving:touching:_:)`, telling the caller when the next
  /// write may begin: `sent` is called (at most once, on this thread,
  /// before it returns) once this write's commit is on its way to a store
  /// across a network, so that another write may be validated and sent
  /// behind it while it flushes, on the state it will leave. It still
  /// returns only once the commit is durable, or throws. A store that
  /// commits where it runs calls nothing: the next write begins once this
  /// one has returned.
  func write<R>(
    reserving bytes: Int, touching streams: [StreamName], whenSent sent: () -> Void,
    _ body: (any LogWriter) throws -> R
  ) throws -> R
  /// Makes the log's place ready for every role that will use it: an
  /// empty log where there is none, the tables an older msglog's log lacks;
  /// nothing when it is ready. Appends no event.
  func initialize() throws -> LogInitialization
  /// Which store it is, for the errors whose words depend on it.
  var kind: MsglogError.Store { get }
  /// Whether reads go without a lock (an LMDB database read-only to this
  /// user): a read's `body` may then run more than once, and a caller that
  /// streams output should hold it back until the read returns.
  var readsWithoutLock: Bool { get }

  // What some stores can do; EventStore+Abilities.swift has the answers of
  // a store that cannot.

  /// Whether the files this store opened have been removed or replaced
  /// since (a server then refuses writes rather than acknowledge them into
  /// a deleted file).
  var isDisplaced: Bool { get }
  /// Whether reads come from a hot standby, which refuses writes.
  func isStandby() throws -> Bool
  /// Whether the store can be a replica of another log (one that syncs).
  var keepsReplicas: Bool { get }
  /// Whether its writers build a new log in bulk (`BulkLoading`).
  var loadsInBulk: Bool { get }
  /// Takes the replica's sync lock.
  func takeSyncLock() throws -> SyncLockAttempt
  /// A consistent copy of the live store at `destination` while writers go
  /// on, whole or not at all; nil when the store has no such copy (its own
  /// tools copy it).
  func copy(to destination: String, compact: Bool) throws -> StoreCopy?
  /// Scrubs what erasure left in the store's files (old page copies, free
  /// pages): the bytes scrubbed; nil when the store has no such purge.
  /// `waiting` is told, once, what it waits for when it must wait long
  /// (a PostgreSQL transaction older than the purge).
  func purge(waiting: (String) -> Void) throws -> UInt64?
}

extension EventStore {
  package func write<R>(_ body: (any LogWriter) throws -> R) throws -> R {
    try write(reserving: 0, touching: [], body)
  }

  package var readsWithoutLock: Bool { false }

  package func write<R>(
    reserving bytes: Int, touching streams: [StreamName], whenSent sent: () -> Void,
    _ body: (any LogWriter) throws -> R
  ) throws -> R {
    try write(reserving: bytes, touching: streams, body)
  }
}
