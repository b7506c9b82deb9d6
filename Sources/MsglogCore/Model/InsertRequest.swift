/// An insert (or, without an index, an append), as `WriteRequest.Command.insert` carries it.
public struct InsertRequest: Equatable, Sendable {
  /// Where the item goes (0…count); the end when nil.
  public var index: Int?
  public var text: String
  public var sender: String?
  /// The id to use; a fresh random one when nil.
  public var id: ItemID?

  public init(index: Int? = nil, text: String, sender: String? = nil, id: ItemID? = nil) {
    self.index = index
    self.text = text
    self.sender = sender
    self.id = id
  }
}
