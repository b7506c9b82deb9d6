/// How `remove` names its item.
public enum ItemSelector: Equatable, Sendable {
  case id(ItemID)
  /// At least 8 characters of the lowercase text form.
  case prefix(String)

  /// Parses a full UUID in any case or a prefix of 8+ characters of its text form.
  public init(parsing text: String) throws(MsglogError) {
    if let id = ItemID(canonical: text) {
      self = .id(id)
      return
    }
    let lower = text.lowercased()
    let valid = lower.utf8.allSatisfy { $0.isHexDigit || $0 == UInt8(ascii: "-") }
    guard valid, lower.utf8.count <= 36 else { throw .invalidInput(.malformedSelector(text)) }
    guard lower.utf8.count >= 8 else { throw .invalidInput(.prefixTooShort(text)) }
    self = .prefix(lower)
  }
}
