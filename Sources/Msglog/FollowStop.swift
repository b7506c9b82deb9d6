/// A file descriptor that ends a `follow` when it signals.
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
