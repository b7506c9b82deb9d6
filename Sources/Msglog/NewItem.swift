/// A message to append or insert in a batch.
public struct NewItem: Equatable, Sendable {
  /// The message: 1 byte to 1 MiB of UTF-8.
  public var text: String
  /// Who wrote it; nil for a message without one (never empty).
  public var sender: String?
  /// The id to use; a fresh random one when nil.
  public var id: ItemID?

  /// A message to write, checked when the batch is performed.
  public init(_ text: String, sender: String? = nil, id: ItemID? = nil) {
    self.text = text
    self.sender = sender
    self.id = id
  }
}
