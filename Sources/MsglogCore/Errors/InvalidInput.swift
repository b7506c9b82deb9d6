/// Input that breaks the rules of docs/REFERENCE.md ("Concepts", "Import"), whatever the state of the log.
public enum InvalidInput: Equatable, Sendable, CustomStringConvertible {
  case emptyText
  case textTooLong(bytes: Int)
  case emptySender
  case senderTooLong(bytes: Int)
  case emptyStreamName
  case streamNameTooLong(bytes: Int)
  case streamNameHasControl(String)
  /// An item named by something that is neither a UUID nor a prefix of one.
  case malformedSelector(String)
  case prefixTooShort(String)
  /// A new item's id (or the item a move names) that is not a UUID.
  case malformedID(String)
  /// A write whose members break its declaration (`WriteOperation`): an
  /// HTTP body, an import line. The reason names the member, as JSON does.
  case write(String)
  /// A rebase without the version the command was made at.
  case rebaseWithoutVersion

  public var description: String {
    switch self {
    case .emptyText: return "message text is empty"
    case .textTooLong(let n): return "message text is \(n) bytes; the limit is \(Limits.maxTextBytes) bytes (1 MiB)"
    case .emptySender: return "sender is empty"
    case .senderTooLong(let n): return "sender is \(n) bytes; the limit is \(Limits.maxSenderBytes) bytes"
    case .emptyStreamName: return "stream name is empty"
    case .streamNameTooLong(let n): return "stream name is \(n) bytes; the limit is \(Limits.maxStreamNameBytes) bytes"
    case .streamNameHasControl(let name): return "stream name \(TerminalText.quoted(name)) contains a control character"
    case .malformedSelector(let text):
      return "malformed id \(TerminalText.quoted(text)): expected a UUID or a prefix of one"
    case .prefixTooShort(let text):
      return "id prefix \(TerminalText.quoted(text)) is too short: give at least 8 characters"
    case .malformedID(let text): return "malformed id \(TerminalText.quoted(text)): expected a UUID"
    case .write(let reason): return reason
    case .rebaseWithoutVersion:
      return Self.rebaseWithoutVersion(
        rebase: WriteMember.rebase.quoted, expectVersion: WriteMember.expectVersion.quoted)
    }
  }

  /// `rebaseWithoutVersion` in a door's names for the two: the JSON doors'
  /// members (`description`), the command line's options.
  package static func rebaseWithoutVersion(rebase: String, expectVersion: String) -> String {
    "\(rebase) needs \(expectVersion): the version the command was made at"
  }
}
