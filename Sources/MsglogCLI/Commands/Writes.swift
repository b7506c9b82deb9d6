import Msglog

/// `append`, `insert`, `move`, `remove`: one write each, printed after it commits.
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
    let log = try openLog(forWriting: true)
    let expected = try args.number(Options.expectVersion)
    var progress = Progress("appending", total: items.count, stderr: stderr)
    defer { progress.finish() }
    let outcomes =
      try index.map {
        try log.insert(contentsOf: items, at: $0, into: stream, expectVersion: expected) { done, _ in
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
    guard let outcome = try openLog(forWriting: true).move(from: from, to: to, in: stream, expectVersion: expected)
    else {
      stderr.note("msglog: nothing to do: the item is already at index \(to)")
      return
    }
    try stdout.line(Format.outcome(outcome, json: json))
  }

  func remove() throws {
    let selector = try ItemSelector(parsing: operands[0])
    let stream = try stream
    let expected = try args.number(Options.expectVersion)
    let outcome = try openLog(forWriting: true).remove(selector, from: stream, expectVersion: expected)
    try stdout.line(Format.outcome(outcome, json: json))
  }
}
