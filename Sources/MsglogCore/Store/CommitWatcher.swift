/// Wakes a follower when the log may have grown, from any process.
///
/// The store decides how (inotify on LMDB's data file, `LISTEN` on
/// PostgreSQL); a follower polls `fileDescriptor` together with whatever
/// else it waits for, and never sleeps in a loop.
package protocol CommitWatcher: AnyObject {
  /// Readable when a commit may have happened since the last `drain()`.
  var fileDescriptor: Int32 { get }
  /// Consumes what woke the descriptor.
  func drain() throws
}

/// A store whose commits can be watched.
package protocol FollowableStore: EventStore {
  func watchCommits() throws -> any CommitWatcher
}
