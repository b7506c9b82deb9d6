/// Wakes a follower when the log may have grown, from any process.
///
/// The store decides how (inotify on LMDB's data file, `LISTEN` on a
/// PostgreSQL primary — and its head read after a second without a
/// notification, for a writer killed before it could send one — the head
/// polled on a standby, which cannot `LISTEN`); a follower polls
/// `fileDescriptor` together with whatever else it waits for, for at most
/// the watcher's `pollInterval`, and never sleeps in a loop.
package protocol CommitWatcher: AnyObject {
  /// Readable when a commit may have happened since the last `drain()`.
  var fileDescriptor: Int32 { get }
  /// How long, in milliseconds, a follower may wait on the descriptor
  /// before calling `drain()` anyway: a watcher that polls the store (a
  /// server that cannot notify) says when to look next; -1, the default,
  /// waits for the descriptor alone.
  var pollInterval: Int32 { get }
  /// Consumes what woke the descriptor (or ended the interval); false when
  /// the log has surely not grown, so that a follower need not read it.
  func drain() throws -> Bool
  /// The head the last `drain()` learned and can vouch for (a commit of
  /// this very process announced it, or the watcher read it from the
  /// store), taken once; nil when a follower of the head must read it.
  func takeAnnouncedHead() -> UInt64?
}

extension CommitWatcher {
  package var pollInterval: Int32 { -1 }
  package func takeAnnouncedHead() -> UInt64? { nil }
}

/// A store whose commits can be watched.
package protocol FollowableStore: EventStore {
  func watchCommits() throws -> any CommitWatcher
  /// Wakes when the database that does not exist yet may have been made
  /// (its first commit), for a follower that waits for it: the follower
  /// then tries `watchCommits()` again.
  func watchCreation() throws -> any CommitWatcher
  /// The head's seq as committed now: what a follower of the head alone
  /// reads at each wake, as cheaply as the store can (one statement on
  /// PostgreSQL, where a snapshot costs three round trips). The log's own
  /// head: a replica's pending changes do not count.
  func committedHead() throws -> UInt64
}

extension FollowableStore {
  package func committedHead() throws -> UInt64 { try read { try $0.headSeq() } }
}

/// A watcher with no descriptor that says "look" every `pollInterval`
/// milliseconds: for what cannot be watched (a database whose directory's
/// parent does not exist yet, a standby without the schema).
package final class IntervalWatcher: CommitWatcher {
  package let pollInterval: Int32

  package init(milliseconds: Int32) { pollInterval = milliseconds }

  /// poll(2) ignores a negative descriptor: only the interval wakes.
  package var fileDescriptor: Int32 { -1 }

  package func drain() throws -> Bool { true }
}
