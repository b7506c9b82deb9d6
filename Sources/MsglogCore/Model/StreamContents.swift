/// A stream's items right after some seq, with the counters that locate it.
public struct StreamContents: Equatable, Sendable {
  /// Whose items these are.
  public var stream: StreamName
  /// The last event folded in: the global head, or the `--at` value.
  public var seq: UInt64
  /// The stream's version at that point (0 before its first event).
  public var version: UInt64
  /// The items in their order: index 0 first.
  public var items: [Item]

  public init(stream: StreamName, seq: UInt64, version: UInt64, items: [Item]) {
    self.stream = stream
    self.seq = seq
    self.version = version
    self.items = items
  }
}
