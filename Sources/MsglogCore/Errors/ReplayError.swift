/// An event that does not fit the state replay has reached: the log is corrupted.
public struct ReplayError: Error, Equatable, CustomStringConvertible, Sendable {
  public var seq: UInt64
  public var reason: String

  public init(seq: UInt64, reason: String) {
    self.seq = seq
    self.reason = reason
  }

  public var description: String { "corrupted log at seq \(seq): \(reason)" }
}
