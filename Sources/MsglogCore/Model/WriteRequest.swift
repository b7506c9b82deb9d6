/// A command, with the stream it is for: what `EventLog.perform` takes.
public struct WriteRequest: Equatable, Sendable {
  /// What a user asks of a stream; the ledger validates it into an event.
  public enum Command: Equatable, Sendable {
    /// Insert at `index`, or at the end when nil (append).
    case insert(InsertRequest)
    case remove(ItemSelector)
    /// Move the item at `from` so that it ends at `to`; when `id` is given the
    /// item at `from` must be that one (import of exported lines checks it).
    case move(from: Int, to: Int, id: ItemID?)
  }

  public var stream: StreamName
  public var command: Command
  /// The event time to record; now when nil (import keeps exported times).
  public var time: Timestamp?

  public init(stream: StreamName, command: Command, time: Timestamp? = nil) {
    self.stream = stream
    self.command = command
    self.time = time
  }
}
