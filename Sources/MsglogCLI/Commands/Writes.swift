import Msglog

/// `append`, `insert`, `move`, `remove`, `edit`, `restore`, `undo`: one
/// write each, printed after it commits.
///
/// Each command sets its arguments and options as the members its
/// operation declares (`WriteOperation`: `FROM` is `from`, `--sender` is
/// `sender`, `--expect-version` is `expectVersion`) and hands them to the
/// decoder every door's writes go through, so that the command line, the
/// HTTP API and import refuse the same write with the same words.
extension Invocation {
  /// `append` (index nil) and `insert INDEX`.
  func insert(at index: UInt64?) throws {
    let textArguments = Array(operands.dropFirst(index == nil ? 0 : 1))
    var texts: [(text: String, line: Int)]
    if args.has(Options.lines) {
      guard textArguments.isEmpty else {
        throw CommandLineError.usage("--lines reads messages from stdin; it takes no TEXT arguments")
      }
      guard !args.has(Options.id) else {
        throw CommandLineError.usage("--id names one item; it cannot go with --lines")
      }
      texts = try InputText.lines(stdin.readAll())
    } else if textArguments.isEmpty {
      if stdin.isTerminal { stderr.note("msglog: reading the message from stdin (end it with Ctrl-D)") }
      try? stderr.flush()
      texts = [(try InputText.whole(stdin.readAll()), 1)]
    } else {
      texts = [(textArguments.joined(separator: " "), 1)]
    }
    var writes: [Write] = []
    writes.reserveCapacity(texts.count)
    for (offset, item) in texts.enumerated() {
      var members = try members()
      members.set(.text, .string(item.text))
      // Past 2^63-1 is out of range, and refused as such.
      if let index { members.set(.index, .number(min(index + UInt64(offset), Limits.maxNumber))) }
      writes.append(try decode(index == nil ? .append : .insert, &members))
    }
    let batch = try WriteBatch(
      writes.map(\.request), expectVersion: writes.first?.expectVersion, rebase: writes.first?.rebase ?? false)
    let log = try openLog(forWriting: true)
    var progress = Progress("appending", total: texts.count, stderr: stderr)
    defer { progress.finish() }
    // A refused line of `--lines` is named by its line of stdin. (With a
    // progress report the batch is its own transaction: this process makes
    // no other write to share one with.)
    let outcomes = try log.perform(
      batch, lineNumbers: args.has(Options.lines) ? texts.map(\.line) : nil,
      progress: { done, _ in progress.update(done) })
    progress.finish()
    let made = outcomes.compactMap { $0 }
    try reporting(made.isEmpty ? nil : .changes(made)) {
      for outcome in outcomes { try stdout.line(Format.outcome(outcome!, json: json)) }
    }
    // The ids stay alone on stdout, for scripts: where a rebase put them goes to stderr.
    if !json, let first = outcomes.first??.index, outcomes.first??.rebased == true, let index,
      let version = writes.first?.expectVersion
    {
      let count = outcomes.count
      stderr.note(
        "msglog: rebased: the stream moved on since version \(version), so "
          + (count == 1
            ? "it went in at index \(first) (\(index) at version \(version))"
            : "they went in at indices \(first)…\(first + count - 1) (\(index)… at version \(version))"))
    }
  }

  func move() throws {
    var members = try members()
    // Checked in the order they are given, so that `move a b` names FROM.
    let from = try number(at: 0, what: "FROM index")
    let to = try number(at: 1, what: "TO index")
    members.set(.from, .number(from))
    members.set(.to, .number(to))
    let write = try decode(.move, &members)
    guard let outcome = try perform(write) else {
      stderr.note(
        write.rebase
          ? "msglog: nothing to do: the item is already where the move meant it"
          : "msglog: nothing to do: the item is already at index \(to)")
      if json { try stdout.line(Format.unchanged("moved")) }
      return
    }
    try reporting(.changes([outcome])) {
      try stdout.line(Format.outcome(outcome, json: json, rebasedFrom: write.expectVersion, move: (from, to)))
    }
  }

  func remove() throws {
    var members = try members()
    members.set(.id, .string(operands[0]))
    let write = try decode(.remove, &members)
    let outcome = try perform(write)!
    try reporting(.changes([outcome])) {
      try stdout.line(Format.outcome(outcome, json: json, rebasedFrom: write.expectVersion))
    }
  }

  func edit() throws {
    let words = Array(operands.dropFirst())
    var members = try members()
    members.set(.id, .string(operands[0]))
    if words.isEmpty {
      if stdin.isTerminal { stderr.note("msglog: reading the new text from stdin (end it with Ctrl-D)") }
      try? stderr.flush()
      members.set(.text, .string(try InputText.whole(stdin.readAll())))
    } else {
      members.set(.text, .string(words.joined(separator: " ")))
    }
    let write = try decode(.edit, &members)
    guard let outcome = try perform(write) else {
      stderr.note("msglog: nothing to do: the item has this text already")
      if json { try stdout.line(Format.unchanged("edited")) }
      return
    }
    try reporting(.changes([outcome])) {
      try stdout.line(Format.outcome(outcome, json: json, rebasedFrom: write.expectVersion))
    }
  }

  func restore() throws {
    var members = try members()
    members.set(.id, .string(operands[0]))
    if let index = try args.number(Options.index) { members.set(.index, .number(index)) }
    let outcome = try perform(try decode(.restore, &members))!
    try reporting(.changes([outcome])) { try stdout.line(Format.outcome(outcome, json: json)) }
  }

  func undo() throws {
    var members = try members()
    let seq = try operands.first.map { try Arguments.number($0, what: "SEQ") }
    if let seq { members.set(.seq, .number(seq)) }
    guard let outcome = try perform(try decode(.undo, &members)) else {
      stderr.note("msglog: nothing to do: undoing event \(seq.map(String.init) ?? "") changes nothing now")
      if json { try stdout.line(Format.unchanged("undone")) }
      return
    }
    try reporting(.changes([outcome])) { try stdout.line(Format.outcome(outcome, json: json)) }
  }

  // MARK: - The members and the decoder

  /// The members a write command's options give (those it has: the
  /// declaration table lets no other through): `--sender`, `--id`,
  /// `--expect-version`, `--rebase`.
  private func members() throws -> WriteMembers {
    var members = WriteMembers()
    if let sender = args[Options.sender] { members.set(.sender, .string(sender)) }
    if let id = args[Options.id] { members.set(.id, .string(id)) }
    if let expected = try args.number(Options.expectVersion) { members.set(.expectVersion, .number(expected)) }
    if args.has(Options.rebase) { members.set(.rebase, .bool(true)) }
    return members
  }

  /// The write the members stand for, on `--stream`, by the decoder every door uses.
  private func decode(_ operation: WriteOperation, _ members: inout WriteMembers) throws -> Write {
    try Write(decoding: &members, operation: operation, door: .command, defaultStream: try stream)
  }

  /// One write, committed.
  private func perform(_ write: Write) throws -> Outcome? {
    let batch = try WriteBatch(write)
    return try openLog(forWriting: true).perform(batch)[0]
  }
}
