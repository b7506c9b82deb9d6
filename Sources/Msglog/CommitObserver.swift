import Synchronization

/// Told of every transaction the group commit makes (a server's metrics:
/// how many writes share a transaction, how long it takes). Called on the
/// committing thread after the commit, once per transaction — never per
/// write — so it must be quick and must not block.
package protocol CommitObserver: AnyObject, Sendable {
  /// One transaction of `writes` calls, which appended `events` events
  /// (none when it failed), took `duration`.
  func committed(writes: Int, events: Int, duration: Duration)
}

/// Where a log keeps its observer: nil until one is set, read once per
/// transaction (an uncontended lock, next to a commit's flush).
package final class CommitObserverSlot: Sendable {
  private let slot = Mutex<(any CommitObserver)?>(nil)

  package var observer: (any CommitObserver)? {
    get { slot.withLock { $0 } }
    set { slot.withLock { $0 = newValue } }
  }
}
