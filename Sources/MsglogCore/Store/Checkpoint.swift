/// A stream's items at some seq, stored so that `replay --at` need not fold
/// the log from the start.
package struct Checkpoint: Equatable, Sendable {
  package var stream: StreamName
  package var seq: UInt64
  package var version: UInt64
  package var slots: [Slot]

  package init(stream: StreamName, seq: UInt64, version: UInt64, slots: [Slot]) {
    self.stream = stream
    self.seq = seq
    self.version = version
    self.slots = slots
  }
}
