import Msglog

/// `append`, `insert`, `move`, `remove`, `edit`, `restore`, `undo`: one
/// write each, printed after it commits.
extension Invocation {
  /// `append` (index nil) and `insert INDEX`.
  func insert(at index: Int?) throws {
    let stream = try stream
    let sender = args[Options.sender]
    if let sender { try Limits.checkSender(sender) }
    var id: ItemID? = nil
    if let text = args[Options.id] {
      guard let parsed = ItemID(canonical: text) else {
        throw CommandLineError.usage("malformed --id \(TerminalText.quoted(text)): expected a UUID")
      }
      id = parsed
    }
    let textArguments = Array(operands.dropFirst(index == nil ? 0 : 1))
    let texts: [String]
    if args.has(Options.lines) {
      guard textArguments.isEmpty else {
        throw CommandLineError.usage("--lines reads messages from stdin; it takes no TEXT arguments")
      }
      guard id == nil else { throw CommandLineError.usage("--id names one item; it cannot go with --lines") }
      texts = try InputText.lines(stdin.readAll())
    } else if textArguments.isEmpty {
      if stdin.isTerminal { stderr.note("msglog: reading the message from stdin (end it with Ctrl-D)") }
      try? stderr.flush()
      texts = [try InputText.whole(stdin.readAll())]
    } else {
      texts = [textArguments.joined(separator: " ")]
      try Limits.checkText(texts[0])
    }
    let items = texts.map { NewItem($0, sender: sender, id: id) }
    let expected = try args.number(Options.expectVersion)
    let rebase = try rebasing(expected)
    let log = try openLog(forWriting: true)
    var progress = Progress("appending", total: items.count, stderr: stderr)
    defer { progress.finish() }
    let outcomes =
      try index.map {
        try log.insert(contentsOf: items, at: $0, into: stream, expectVersion: expected, rebase: rebase) { done, _ in
          progress.update(done)
        }
      }
      ?? log.append(contentsOf: items, to: stream, expectVersion: expected) { done, _ in progress.update(done) }
    progress.finish()
    for outcome in outcomes { try stdout.line(Format.outcome(outcome, json: json)) }
  }

  func move() throws {
    let from = try index(at: 0, what: "FROM index")
    let to = try index(at: 1, what: "TO index")
    let stream = try stream
    let expected = try args.number(Options.expectVersion)
    let rebase = try rebasing(expected)
    guard
      let outcome = try openLog(forWriting: true).move(
        from: from, to: to, in: stream, expectVersion: expected, rebase: rebase)
    else {
      stderr.note(
        rebase
          ? "msglog: nothing to do: the item is already where the move meant it"
          : "msglog: nothing to do: the item is already at index \(to)")
      return
    }
    try stdout.line(Format.outcome(outcome, json: json))
  }

  func remove() throws {
    let selector = try ItemSelector(parsing: operands[0])
    let stream = try stream
    let expected = try args.number(Options.expectVersion)
    let rebase = try rebasing(expected)
    let outcome = try openLog(forWriting: true).remove(selector, from: stream, expectVersion: expected, rebase: rebase)
    try stdout.line(Format.outcome(outcome, json: json))
  }

  func edit() throws {
    let selector = try ItemSelector(parsing: operands[0])
    let stream = try stream
    let sender = args[Options.sender]
    if let sender { try Limits.checkSender(sender) }
    let expected = try args.number(Options.expectVersion)
    let rebase = try rebasing(expected)
    let words = Array(operands.dropFirst())
    let text: String
    if words.isEmpty {
      if stdin.isTerminal { stderr.note("msglog: reading the new text from stdin (end it with Ctrl-D)") }
      try? stderr.flush()
      text = try InputText.whole(stdin.readAll())
    } else {
      text = words.joined(separator: " ")
      try Limits.checkText(text)
    }
    guard
      let outcome = try openLog(forWriting: true).edit(
        selector, text: text, sender: sender, in: stream, expectVersion: expected, rebase: rebase)
    else {
      stderr.note("msglog: nothing to do: the item has this text already")
      return
    }
    try stdout.line(Format.outcome(outcome, json: json))
  }

  func restore() throws {
    let selector = try ItemSelector(parsing: operands[0])
    let stream = try stream
    let index = try args.number(Options.index).map { Int($0) }
    let expected = try args.number(Options.expectVersion)
    let outcome = try openLog(forWriting: true).restore(selector, at: index, in: stream, expectVersion: expected)
    try stdout.line(Format.outcome(outcome, json: json))
  }

  func undo() throws {
    let seq = try operands.first.map { try Arguments.number($0, what: "SEQ") }
    let stream = try stream
    let expected = try args.number(Options.expectVersion)
    guard let outcome = try openLog(forWriting: true).undo(seq, in: stream, expectVersion: expected) else {
      stderr.note("msglog: nothing to do: undoing event \(seq.map(String.init) ?? "") changes nothing now")
      return
    }
    try stdout.line(Format.outcome(outcome, json: json))
  }

  /// `--rebase`, which needs `--expect-version`.
  func rebasing(_ expected: UInt64?) throws -> Bool {
    guard args.has(Options.rebase) else { return false }
    guard expected != nil else {
      throw CommandLineError.usage(
        "--rebase needs --expect-version N: the version the command was made at",
        hint: "e.g. 'msglog move 3 0 --expect-version 17 --rebase'")
    }
    return true
  }
}
