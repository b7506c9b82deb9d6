import Msglog
import MsglogWire

/// What a write prints (the one text and JSON form of each outcome).
extension Format {
  /// A write that changed nothing, with `--json`: the document `serve`
  /// answers (`{"moved":false}`, `{"edited":false}`, `{"undone":false}`), so
  /// a script parses one shape whatever happened. Text mode prints nothing.
  static func unchanged(_ key: StaticString) -> String {
    var writer = JSONWriter()
    writer.unchanged(key)
    return writer.text
  }

  /// What a write prints: the new id, `moved …`, `removed …`, `edited …`,
  /// `restored … at N`, or the JSON object. An undo prints what its event's
  /// own command prints.
  ///
  /// A rebased write (`--expect-version N --rebase` on a stream that moved
  /// on) says so after what it did: `moved ID 1 -> 3 (rebased from 2 -> 4
  /// at version 6)`, `removed ID (rebased from version 6)`.
  static func outcome(
    _ outcome: Outcome, json: Bool, rebasedFrom version: UInt64? = nil, move asked: (UInt64, UInt64)? = nil
  ) -> String {
    let event = outcome.event
    if json {
      var writer = JSONWriter()
      writer.outcome(outcome)
      return writer.text
    }
    var rebase = ""
    if outcome.rebased, let version {
      rebase = " (rebased from " + (asked.map { "\($0.0) -> \($0.1) at " } ?? "") + "version \(version))"
    }
    switch event.op {
    case .insert: return event.id.text
    case .remove: return "removed \(event.id.text)" + rebase
    case .move(_, let from, let to): return "moved \(event.id.text) \(from) -> \(to)" + rebase
    case .edit: return "edited \(event.id.text)" + rebase
    case .restore(_, let index, _): return "restored \(event.id.text) at \(index)"
    case .erase: return "erased \(event.id.text)"
    case .unsign(_, let edit): return "unsigned edit \(edit) of \(event.id.text)"
    }
  }
}
