/// A file descriptor that ends a blocking `follow` when it signals.
///
/// Why a descriptor, in the door: the follower blocks in `poll(2)` on the
/// store's own descriptor (inotify on LMDB's data file, the PostgreSQL
/// connection's socket), and a stop is one more descriptor in the same
/// call — no thread, timer or wake-up is needed to end it, and what ends a
/// command-line follower can only be a descriptor: a signal handler may do
/// no more than write a byte to a pipe (the self-pipe), and a reader that
/// went away is seen as stdout hanging up. An app that follows from a task
/// uses the asynchronous `follow(from:stream:)` and cancels the task instead.
public struct FollowStop: Sendable {
  public var fileDescriptor: Int32
  /// Readable (a self-pipe of signal handlers, a cancellation pipe), or
  /// only hung up (stdout: its reader went away; a terminal may also be readable).
  public var whenReadable: Bool

  public init(fileDescriptor: Int32, whenReadable: Bool) {
    self.fileDescriptor = fileDescriptor
    self.whenReadable = whenReadable
  }
}
