/// A stream's counters: what `streams` lists.
public struct StreamCounters: Equatable, Sendable {
  public var stream: StreamName
  /// Live items.
  public var count: UInt64
  /// The stream's event count.
  public var version: UInt64
  /// Seq of the stream's last event (0 before its first).
  public var lastSeq: UInt64

  public init(stream: StreamName, count: UInt64, version: UInt64, lastSeq: UInt64) {
    self.stream = stream
    self.count = count
    self.version = version
    self.lastSeq = lastSeq
  }

  init(_ head: StreamHead) {
    self.init(stream: head.stream, count: head.count, version: head.version, lastSeq: head.lastSeq)
  }
}
