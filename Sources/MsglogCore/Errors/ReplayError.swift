/// An event that does not fit the state replay has reached: the log is corrupted.
package struct ReplayError: Error, Equatable, CustomStringConvertible, Sendable {
  package var seq: UInt64
  package var reason: String

  package init(seq: UInt64, reason: String) {
    self.seq = seq
    self.reason = reason
  }

  package var description: String { "corrupted log at seq \(seq): \(reason)" }
}
