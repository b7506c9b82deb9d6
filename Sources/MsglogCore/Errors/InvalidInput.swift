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
  /// A remote that is no `http://`, `https://` or `postgres://` location.
  case remoteLocation(String)
  /// A change (as a replica keeps or pushes it) that is malformed.
  case change(String)
  /// A change's `made` (or an event's origin's) before 1970, or more than
  /// a day past the time it is done at (`Limits.madeLeeway`).
  case madeOutOfRange(made: Timestamp, time: Timestamp)
  /// The nil UUID as a replica's id: no replica has it.
  case nilReplica

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
    case .remoteLocation(let location):
      return "\(TerminalText.quoted(location)) is no remote: give the http:// or https:// address of msglog serve, or a postgres:// location"
    case .change(let reason): return reason
    case .madeOutOfRange(let made, let time):
      return made.milliseconds < 0
        ? "the change was made at \(made.rfc3339), before 1970"
        : "the change was made at \(made.rfc3339), more than a day after \(time.rfc3339), when it is done"
    case .nilReplica: return "the nil UUID is no replica's id"
    }
  }

  /// `rebaseWithoutVersion` in a door's names for the two: the JSON doors'
  /// members (`description`), the command line's options.
  package static func rebaseWithoutVersion(rebase: String, expectVersion: String) -> String {
    "\(rebase) needs \(expectVersion): the version the command was made at"
  }
}
