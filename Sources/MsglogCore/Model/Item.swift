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
