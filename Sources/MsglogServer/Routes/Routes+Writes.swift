import Msglog
import MsglogWire

extension Routes {
  enum Operation { case append, insert, move, remove, edit, restore, undo }

  /// A write, from a JSON body of the members the operation reads; the
  /// library validates the text and sender as for the command line.
  func write(_ request: Request, _ operation: Operation) throws -> Response {
    var body = try RequestBody(request.body)
    let stream = try body.stream()
    let expected = try body.number("expectVersion")
    // A write made on the list shown at `expectVersion`, to land where it was meant.
    var rebase = false
    if [.insert, .move, .remove, .edit].contains(operation) {
      rebase = try body.bool("rebase") ?? false
      if rebase, expected == nil { throw HTTPError.badRequest("\"rebase\" needs \"expectVersion\"") }
    }
    let outcome: Outcome?
    switch operation {
    case .append, .insert:
      let index = operation == .insert ? try body.required(body.number("index"), "index") : nil
      let text = try body.required(body.string("text"), "text")
      let sender = try body.string("sender")
      let id = try body.string("id").map { text throws(HTTPError) in
        guard let id = ItemID(canonical: text) else { throw .badRequest("invalid id \(TerminalText.quoted(text))") }
        return id
      }
      try body.finish()
      if let index {
        // Numbers are 0 to 2^63-1 (`body.number`): every one is an Int.
        outcome = try log.insert(
          text, at: Int(index), sender: sender, id: id, into: stream, expectVersion: expected, rebase: rebase)
      } else {
        outcome = try log.append(text, sender: sender, id: id, to: stream, expectVersion: expected)
      }
    case .move:
      let from = try body.required(body.number("from"), "from")
      let to = try body.required(body.number("to"), "to")
      try body.finish()
      outcome = try log.move(from: Int(from), to: Int(to), in: stream, expectVersion: expected, rebase: rebase)
    case .remove:
      let selector = try ItemSelector(parsing: try body.required(body.string("id"), "id"))
      try body.finish()
      outcome = try log.remove(selector, from: stream, expectVersion: expected, rebase: rebase)
    case .edit:
      let selector = try ItemSelector(parsing: try body.required(body.string("id"), "id"))
      let text = try body.required(body.string("text"), "text")
      let sender = try body.string("sender")
      try body.finish()
      outcome = try log.edit(
        selector, text: text, sender: sender, in: stream, expectVersion: expected, rebase: rebase)
    case .restore:
      let selector = try ItemSelector(parsing: try body.required(body.string("id"), "id"))
      let index = try body.number("index").map { Int($0) }
      try body.finish()
      outcome = try log.restore(selector, at: index, in: stream, expectVersion: expected)
    case .undo:
      let seq = try body.number("seq")
      try body.finish()
      outcome = try log.undo(seq, in: stream, expectVersion: expected)
    }
    guard let outcome else {
      // Nothing appended, as the command line's no-ops.
      switch operation {
      case .edit: return .json { $0.unchanged("edited") }
      case .undo: return .json { $0.unchanged("undone") }
      default: return .json { $0.unchanged("moved") }
      }
    }
    return .json { $0.outcome(outcome) }
  }
}
