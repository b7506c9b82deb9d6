public struct InsertRequest: Equatable, Sendable {
  public var index: UInt64?
  public var text: String
  public var sender: String?
  /// The id to use; a fresh random one when nil.
  public var id: ItemID?

  public init(index: UInt64? = nil, text: String, sender: String? = nil, id: ItemID? = nil) {
    self.index = index
    self.text = text
    self.sender = sender
    self.id = id
  }
}
