/// A place that keeps a log: serialised write transactions, snapshot reads,
/// shared by any number of threads.
///
/// A store's own failures (LMDB's, PostgreSQL's, damage found in derived
/// rows) may escape it in their own types: `EventLog` turns them into
/// `MsglogError`s, in one place.
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
  /// Whether reads go without a lock (an LMDB database read-only to this
  /// user): a read's `body` may then run more than once, and a caller that
  /// streams output should hold it back until the read returns.
  var readsWithoutLock: Bool { get }
}

extension EventStore {
  package func write<R>(_ body: (any LogWriter) throws -> R) throws -> R {
    try write(reserving: 0, touching: [], body)
  }

  package var readsWithoutLock: Bool { false }
}
