/// How `remove` names its item.
public enum ItemSelector: Equatable, Sendable {
  case id(ItemID)
  /// At least 8 characters of the text form (any case), matching exactly
  /// one live item of the stream.
  case prefix(String)

  /// Parses a full UUID in any case (with its dashes or as 32 digits without
  /// them) or a prefix of 8+ characters of its text form.
  public init(parsing text: String) throws(MsglogError) {
    if let id = ItemID(canonical: text) {
      self = .id(id)
      return
    }
    self = .prefix(try Self.checkedPrefix(text))
  }

  /// The prefix in lowercase, as ids print, after checking it: hex digits
  /// and dashes, 8 to 36 of them. The ledger checks again what a caller
  /// built as `.prefix(…)` without parsing.
  package static func checkedPrefix(_ text: String) throws(MsglogError) -> String {
    let lower = text.lowercased()
    let valid = lower.utf8.allSatisfy { Hex.value(of: $0) != nil || $0 == UInt8(ascii: "-") }
    guard valid, lower.utf8.count <= 36 else { throw .invalidInput(.malformedSelector(text)) }
    guard lower.utf8.count >= 8 else { throw .invalidInput(.prefixTooShort(text)) }
    return lower
  }
}
