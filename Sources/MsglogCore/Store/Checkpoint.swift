/// A stream's items at some seq, stored so that `replay --at` need not fold
/// the log from the start.
public struct Checkpoint: Equatable, Sendable {
  public var stream: StreamName
  public var seq: UInt64
  public var version: UInt64
  public var slots: [Slot]

  public init(stream: StreamName, seq: UInt64, version: UInt64, slots: [Slot]) {
    self.stream = stream
    self.seq = seq
    self.version = version
    self.slots = slots
  }
}
