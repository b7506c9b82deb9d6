/// One element of a stream's ordered array, as `list` and `replay` show it.
public struct Item: Equatable, Sendable {
  public var id: ItemID
  public var text: String
  public var sender: String?
  /// Time of the event that inserted it.
  public var time: Timestamp
  /// Seq of the event that inserted it.
  public var seq: UInt64

  public init(id: ItemID, text: String, sender: String?, time: Timestamp, seq: UInt64) {
    self.id = id
    self.text = text
    self.sender = sender
    self.time = time
    self.seq = seq
  }
}

/// A stream's items right after some seq, with the counters that locate it.
public struct StreamSnapshot: Equatable, Sendable {
  public var stream: StreamName
  /// The last event folded in: the global head, or the `--at` value.
  public var seq: UInt64
  /// The stream's version at that point (0 before its first event).
  public var version: UInt64
  public var items: [Item]

  public init(stream: StreamName, seq: UInt64, version: UInt64, items: [Item]) {
    self.stream = stream
    self.seq = seq
    self.version = version
    self.items = items
  }
}
