/// A message to append or insert in a batch.
public struct NewItem: Equatable, Sendable {
  public var text: String
  public var sender: String?
  /// The id to use; a fresh random one when nil.
  public var id: ItemID?

  public init(_ text: String, sender: String? = nil, id: ItemID? = nil) {
    self.text = text
    self.sender = sender
    self.id = id
  }
}
