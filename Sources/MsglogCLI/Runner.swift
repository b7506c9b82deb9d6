import FoundationEssentials
import MsglogCore
import MsglogLMDB

#if canImport(Glibc)
  import Glibc
#endif

/// One invocation: the parsed command line and where it reads and prints.
struct Runner<Input: InputSource> {
  let args: Arguments
  let spec: CommandSpec?
  /// Positional arguments after the command name.
  let operands: [String]
  let environment: [String: String]
  let stdin: Input
  let stdout: OutputStream
  let stderr: OutputStream

  init(
    arguments: [String], environment: [String: String], stdin: Input, stdout: OutputStream,
    stderr: OutputStream
  ) throws {
    args = try Arguments(parsing: arguments)
    self.environment = environment
    self.stdin = stdin
    self.stdout = stdout
    self.stderr = stderr
    if let name = args.positionals.first {
      guard let spec = CommandSpec.named(name) else {
        throw MsglogError.usage("unknown command \(TerminalText.quoted(name))", hint: "see 'msglog --help'")
      }
      self.spec = spec
    } else {
      spec = nil
    }
    operands = Array(args.positionals.dropFirst())
  }

  var json: Bool { args.has("json") }

  /// `--db`, else `MSGLOG_DB`, else `./msglog.lmdb`.
  var databasePath: String {
    get throws {
      let path = args.options["db"] ?? environment["MSGLOG_DB"].flatMap { $0.isEmpty ? nil : $0 } ?? "msglog.lmdb"
      guard !path.isEmpty else { throw MsglogError.usage("--db needs a path") }
      return path
    }
  }

  /// `--stream`, else `MSGLOG_STREAM`, else `main`.
  var stream: StreamName {
    get throws {
      let name = args.options["stream"] ?? environment["MSGLOG_STREAM"].flatMap { $0.isEmpty ? nil : $0 } ?? "main"
      return try StreamName(validating: name)
    }
  }

  mutating func run() throws {
    guard let spec else {
      if args.has("help") { return try stdout.write(CommandSpec.overviewHelp) }
      if args.has("version") { return try stdout.line("msglog \(MsglogCLI.version)") }
      throw MsglogError.usage("no command given", hint: "see 'msglog --help'")
    }
    if args.has("help") { return try stdout.write(spec.help) }
    if args.has("version") { return try stdout.line("msglog \(MsglogCLI.version)") }
    try spec.check(args, positionals: operands)
    switch spec.name {
    case "help": try help()
    case "append": try insert(at: nil, textArguments: operands)
    case "insert":
      try insert(at: try Arguments.number(operands[0], what: "index"), textArguments: Array(operands.dropFirst()))
    case "move": try move()
    case "remove": try remove()
    case "list": try list()
    case "replay": try replay()
    case "log": try log()
    case "streams": try streams()
    case "export": try export()
    case "import": try importLines()
    case "verify": try verify()
    default: preconditionFailure("command \(spec.name) has a spec but no implementation")
    }
  }

  // MARK: - Commands

  func help() throws {
    guard let name = operands.first else { return try stdout.write(CommandSpec.overviewHelp) }
    guard let spec = CommandSpec.named(name) else {
      throw MsglogError.usage("no help for unknown command \(TerminalText.quoted(name))", hint: "see 'msglog --help'")
    }
    try stdout.write(spec.help)
  }

  func insert(at index: UInt64?, textArguments: [String]) throws {
    let stream = try stream
    let sender = args.options["sender"]
    if let sender { try Limits.checkSender(sender) }
    var id: ItemID? = nil
    if let text = args.options["id"] {
      guard let parsed = ItemID(canonical: text) else {
        throw MsglogError.usage("malformed --id \(TerminalText.quoted(text)): expected a UUID")
      }
      id = parsed
    }
    let texts: [String]
    if args.has("lines") {
      guard textArguments.isEmpty else {
        throw MsglogError.usage("--lines reads messages from stdin; it takes no TEXT arguments")
      }
      guard id == nil else { throw MsglogError.usage("--id names one item; it cannot go with --lines") }
      texts = try InputText.lines(stdin.readAll())
    } else if textArguments.isEmpty {
      if stdin.isTerminal { stderr.note("msglog: reading the message from stdin (end it with Ctrl-D)") }
      try? stderr.flush()
      texts = [try InputText.whole(stdin.readAll())]
    } else {
      texts = [textArguments.joined(separator: " ")]
      try Limits.checkText(texts[0])
    }
    let requests = texts.enumerated().map { offset, text in
      WriteRequest(
        stream: stream,
        command: .insert(
          InsertRequest(index: index.map { $0 + UInt64(offset) }, text: text, sender: sender, id: id)))
    }
    let outcomes = try write(requests, expectVersion: try args.number("expect-version"), label: "appending")
    for outcome in outcomes.compactMap({ $0 }) { try stdout.line(Format.outcome(outcome, json: json)) }
  }

  func move() throws {
    let from = try Arguments.number(operands[0], what: "FROM index")
    let to = try Arguments.number(operands[1], what: "TO index")
    let request = WriteRequest(stream: try stream, command: .move(from: from, to: to, id: nil))
    guard let outcome = try write([request], expectVersion: try args.number("expect-version"))[0] else {
      stderr.note("msglog: nothing to do: the item is already at index \(to)")
      return
    }
    try stdout.line(Format.outcome(outcome, json: json))
  }

  func remove() throws {
    let selector = try ItemSelector(parsing: operands[0])
    let request = WriteRequest(stream: try stream, command: .remove(selector))
    if let outcome = try write([request], expectVersion: try args.number("expect-version"))[0] {
      try stdout.line(Format.outcome(outcome, json: json))
    }
  }

  /// Streams the items out as the order tree yields them: `list` of a
  /// million items holds one leaf in memory, not the list.
  func list() throws {
    let stream = try stream
    let json = json
    try read { reader in
      var width = 1
      try CurrentView.forEachItem(
        of: stream, in: reader,
        header: { snapshot, count in
          width = String(max(count - 1, 0)).count
          if json { try stdout.write(Format.snapshotJSONHead(snapshot, count: count)) }
        }
      ) { index, item in
        if json {
          try stdout.write((index > 0 ? "," : "") + Format.itemJSON(item, index: index))
        } else {
          try Format.writeItemLine(item, index: index, width: width, to: stdout)
        }
      }
      if json { try stdout.line("]}") }
    }
  }

  func replay() throws {
    let stream = try stream
    let at = try args.number("at")
    let snapshot = try read { try Replay.stream(stream, at: at, in: $0) }
    try printSnapshot(snapshot)
  }

  func log() throws {
    if args.has("all") && args.has("stream") {
      throw MsglogError.usage("--all and --stream exclude each other", hint: "--all prints every stream's events")
    }
    let stream = try stream
    let from = try args.number("from") ?? 1
    let limit = try args.number("limit") ?? UInt64.max
    let all = args.has("all")
    guard limit > 0 else {
      _ = try openForReading()
      return
    }
    try read { reader in
      var printed: UInt64 = 0
      try reader.forEachEvent(from: max(from, 1)) { event in
        guard all || event.stream == stream else { return true }
        try stdout.line(json ? event.jsonLine : Format.eventLine(event))
        printed += 1
        return printed < limit
      }
    }
  }

  func streams() throws {
    let heads = try read { try CurrentView.streams(in: $0) }
    if json { try stdout.line(Format.streamsJSON(heads)) } else { try Format.streamsTable(heads, to: stdout) }
  }

  /// Every event, or with an explicit `--stream` (not MSGLOG_STREAM, which
  /// would make a backup silently partial) that stream's only.
  func export() throws {
    let only = try args.options["stream"].map { name throws(MsglogError) in try StreamName(validating: name) }
    try read { reader in
      try reader.forEachEvent(from: 1) { event in
        if let only, event.stream != only { return true }
        try stdout.line(event.jsonLine)
        return true
      }
    }
  }

  func importLines() throws {
    let stream = try stream
    let input: [UInt8]
    if let file = operands.first, file != "-" {
      guard let data = FileManager.default.contents(atPath: file) else {
        throw MsglogError.refused("cannot read \(file): \(FileProblem.describe(file))")
      }
      input = Array(data)
    } else {
      input = try stdin.readAll()
    }
    var requests: [WriteRequest] = []
    var lineNumbers: [Int] = []
    // A UTF-8 byte-order mark, as some editors write, is not part of the first line.
    let body = input.starts(with: [0xEF, 0xBB, 0xBF]) ? Array(input.dropFirst(3)) : input
    for (number, line) in InputText.splitLines(body) {
      if line.allSatisfy({ $0 == 0x20 || $0 == 0x09 }) { continue }
      do {
        requests.append(try ImportLine.parse(line, defaultStream: stream))
        lineNumbers.append(number)
      } catch {
        throw MsglogError.refused(error.message, hint: error.hint).prefixed("line \(number): ")
      }
    }
    let outcomes = requests.isEmpty ? [] : try write(requests, expectVersion: nil, lineNumbers: lineNumbers)
    // Nothing appended (no lines, or only moves onto themselves): the head is where it was.
    let head =
      try outcomes.compactMap { $0?.event.seq }.max()
      ?? (databaseExists() ? openForReading().read { try $0.headSeq() } : 0)
    let imported = outcomes.compactMap { $0 }.count
    if json {
      var o = JSONObjectWriter()
      o.add("imported", imported)
      o.add("seq", head)
      try stdout.line(o.close())
    } else {
      try stdout.line("imported \(imported) \(imported == 1 ? "event" : "events"); the head is seq \(head)")
    }
  }

  func verify() throws {
    if args.has("repair") { return try repair() }
    let report = try read { try Verifier.verify($0) }
    try printReport(report)
  }

  /// Rebuilds the derived tables from the events, in one write transaction,
  /// when verify finds them wrong and the log itself is sound.
  func repair() throws {
    guard try databaseExists() else { _ = try openForReading(); return }
    let store = try LMDBStore(path: try databasePath, create: true)
    let repaired: Int = try store.write { writer in
      let before = try Verifier.verify(writer)
      if before.isClean { return 0 }
      guard before.logIsIntact else {
        for problem in before.problems { try stdout.line(problem) }
        throw MsglogError.refused(
          "the log itself is damaged, so --repair cannot help",
          hint: "--repair rebuilds derived tables from sound events; restore the log from an export or backup")
      }
      try DerivedState.rebuild(writer)
      let after = try Verifier.verify(writer)
      guard after.isClean else {
        throw MsglogError.refused("the rebuild did not verify: \(after.problems.first ?? "")")
      }
      for problem in before.problems { try stdout.line("repaired: " + problem) }
      return before.problems.count
    }
    if repaired > 0 { stderr.note("msglog: rebuilt the derived tables from the log") }
    try printReport(try store.read { try Verifier.verify($0) })
  }

  func printReport(_ report: Verifier.Report) throws {
    if json {
      var o = JSONObjectWriter()
      o.addRaw("ok", report.isClean ? "true" : "false")
      o.add("events", report.events)
      o.add("streams", report.streams)
      o.add("items", report.liveItems)
      var problems = "["
      for (i, p) in report.problems.enumerated() {
        if i > 0 { problems += "," }
        JSONObjectWriter.appendString(p, to: &problems)
      }
      o.addRaw("problems", problems + "]")
      try stdout.line(o.close())
    } else if report.isClean {
      try stdout.line(
        "ok: \(report.events) events, \(report.streams) \(report.streams == 1 ? "stream" : "streams"), "
          + "\(report.liveItems) live \(report.liveItems == 1 ? "item" : "items")")
    } else {
      for problem in report.problems { try stdout.line(problem) }
    }
    guard report.isClean else {
      throw MsglogError.refused(
        "verify found \(report.problems.count) \(report.problems.count == 1 ? "problem" : "problems")",
        hint: report.logIsIntact
          ? "the events are sound; 'msglog verify --repair' rebuilds the derived tables from them"
          : "the log itself is damaged at the seq named; restore it from an export or a backup")
    }
  }

  // MARK: - Store access

  func printSnapshot(_ snapshot: StreamSnapshot) throws {
    if json { try stdout.line(Format.snapshotJSON(snapshot)) } else { try Format.itemLines(snapshot, to: stdout) }
  }

  func databaseExists() throws -> Bool {
    PathKind.of(try databasePath + "/data.mdb") != .missing
  }

  func openForReading() throws -> LMDBStore {
    try LMDBStore(path: try databasePath, create: false)
  }

  /// Runs a read command's body in one read transaction. On a database read
  /// without a reader slot (it is read-only to us), output is held back
  /// until the read is known not to have raced a commit, and the read is
  /// run again when it did.
  func read<R>(_ body: (any LogReader) throws -> R) throws -> R {
    let store = try openForReading()
    guard store.isLockless else { return try store.read(body) }
    for attempt in 0..<5 {
      stdout.hold()
      do {
        let result = try store.read(body)
        try stdout.release()
        return result
      } catch is ConcurrentCommit {
        stdout.discardHeld()
        // Give a busy writer a moment to finish its burst before trying again.
        usleep(useconds_t(10_000 << attempt))
      }
    }
    try stdout.release()
    throw MsglogError.refused(
      "the database changed while it was read, five times over",
      hint: "it is read-only to you, so msglog reads it without a lock and cannot hold writers off; try again")
  }

  /// Validates and appends `requests` in one write transaction.
  ///
  /// A database that does not exist yet is built in a private directory
  /// beside its path and renamed into place only when the write commits: a
  /// refused first command leaves nothing behind, and nobody ever sees a
  /// half-made database.
  func write(_ requests: [WriteRequest], expectVersion: UInt64?, lineNumbers: [Int]? = nil, label: String = "importing")
    throws -> [Outcome?]
  {
    var progress = Progress(label, total: requests.count, stderr: stderr)
    defer { progress.finish() }
    let now = Timestamp(milliseconds: Int64((Date().timeIntervalSince1970 * 1000).rounded(.down)))
    let body: (any LogWriter) throws -> [Outcome?] = { writer in
      let session = try LedgerSession(writer: writer, now: now)
      if let expectVersion, let first = requests.first {
        try session.expect(version: expectVersion, of: first.stream)
      }
      var outcomes: [Outcome?] = []
      outcomes.reserveCapacity(requests.count)
      for (i, request) in requests.enumerated() {
        if i % 1024 == 0 { progress.update(i) }
        // Write the derived rows so far into the same transaction now and
        // then, so that a huge import holds bounded state in memory.
        if i > 0 && i % 65_536 == 0 { try session.finish() }
        do {
          outcomes.append(try session.perform(request))
        } catch let error as MsglogError where lineNumbers != nil {
          // A bad import line is a refused import (exit 1), whatever its class.
          throw MsglogError.refused(error.message, hint: error.hint).prefixed("line \(lineNumbers![i]): ")
        }
      }
      progress.update(requests.count)
      try session.finish()
      return outcomes
    }
    let path = try databasePath
    // Records plus derived rows: a generous estimate is free (the map is address space).
    let estimate = requests.reduce(0) { total, request in
      if case .insert(let insert) = request.command { return total + 2 * insert.text.utf8.count + 512 }
      return total + 256
    }
    let reserve = requests.count > 1 ? estimate : 0
    if PathKind.of(path) == .missing {
      if let outcomes = try DatabaseCreation.create(at: path, { try $0.write(reserving: reserve, body) }) {
        return outcomes
      }
      // Someone else created it meanwhile: write into theirs.
    }
    return try LMDBStore(path: path, create: true).write(reserving: reserve, body)
  }
}

/// Message text from stdin, by SPEC.md's rules.
enum InputText {
  /// All of stdin as one message, less one trailing newline.
  static func whole(_ bytes: [UInt8]) throws -> String {
    var bytes = bytes
    if bytes.last == 0x0A {
      bytes.removeLast()
      // A Windows line end is one newline too.
      if bytes.last == 0x0D { bytes.removeLast() }
    }
    guard let text = String(validating: bytes, as: UTF8.self) else {
      throw MsglogError.usage("the message on stdin is not valid UTF-8")
    }
    try Limits.checkText(text)
    return text
  }

  /// One message per non-blank line; a trailing `\r` is dropped from each.
  static func lines(_ bytes: [UInt8]) throws -> [String] {
    var texts: [String] = []
    for (number, var line) in splitLines(bytes) {
      if line.last == 0x0D { line.removeLast() }
      if line.allSatisfy({ $0 == 0x20 || $0 == 0x09 }) { continue }
      guard let text = String(validating: line, as: UTF8.self) else {
        throw MsglogError.usage("line \(number) of stdin is not valid UTF-8")
      }
      do { try Limits.checkText(text) } catch { throw error.prefixed("line \(number): ") }
      texts.append(text)
    }
    guard !texts.isEmpty else { throw MsglogError.usage("--lines found no message on stdin (every line is blank)") }
    return texts
  }

  /// Lines numbered from 1, without their `\n`; no empty last line after a final newline.
  static func splitLines(_ bytes: [UInt8]) -> [(Int, [UInt8])] {
    var lines: [(Int, [UInt8])] = []
    var start = 0
    var number = 1
    for (i, b) in bytes.enumerated() where b == 0x0A {
      lines.append((number, Array(bytes[start..<i])))
      number += 1
      start = i + 1
    }
    if start < bytes.count { lines.append((number, Array(bytes[start...]))) }
    return lines
  }
}

enum FileProblem {
  static func describe(_ path: String) -> String {
    switch PathKind.of(path) {
    case .missing: return "no such file"
    case .directory: return "it is a directory"
    case .file: return "permission denied"
    }
  }
}
