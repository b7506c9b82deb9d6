import Msglog

/// One run of the command line: the parsed arguments, the command, and
/// where it reads and prints. Each command's handler is a method of this
/// type, in a file of its own under Commands/.
struct Invocation {
  let args: Arguments
  let command: CommandDeclaration?
  /// Positional arguments after the command name.
  let operands: [String]
  let environment: [String: String]
  let stdin: any InputSource
  let stdout: BufferedOutput
  let stderr: BufferedOutput
  /// Text tables dim the short id and the sender on a terminal, unless
  /// `NO_COLOR` is set (no-color.org) or the terminal is dumb.
  let colour: Bool
  /// What the logs this command opens do when LMDB's own checks fail.
  let lmdbAssertionHandler: (@Sendable (_ lockless: Bool, _ message: String) -> Void)?

  init(
    arguments: [String], environment: [String: String], stdin: any InputSource, stdout: BufferedOutput,
    stderr: BufferedOutput, terminal: Bool,
    lmdbAssertionHandler: (@Sendable (_ lockless: Bool, _ message: String) -> Void)? = nil
  ) throws {
    args = try Arguments(parsing: arguments)
    self.environment = environment
    self.stdin = stdin
    self.stdout = stdout
    self.stderr = stderr
    self.lmdbAssertionHandler = lmdbAssertionHandler
    colour = terminal && (environment["NO_COLOR"] ?? "").isEmpty && environment["TERM"] != "dumb"
    if let name = args.positionals.first {
      guard let command = CommandDeclaration.named(name) else {
        throw CommandLineError.usage(
          "unknown command \(TerminalText.quoted(name))", hint: CommandName.suggestion(for: name))
      }
      self.command = command
    } else {
      command = nil
    }
    operands = Array(args.positionals.dropFirst())
  }

  mutating func run() throws {
    guard let command else {
      if args.has(Options.help) { return try stdout.write(Help.overview) }
      if args.has(Options.version) { return try stdout.line("msglog \(MsglogCLI.version)") }
      throw CommandLineError.usage("no command given", hint: "see 'msglog --help'")
    }
    if args.has(Options.help) { return try stdout.write(Help.page(command)) }
    if args.has(Options.version) { return try stdout.line("msglog \(MsglogCLI.version)") }
    try args.check(against: command, positionals: operands)
    switch command.name {
    case .append: try insert(at: nil)
    case .insert: try sayingAMissingDatabase { try insert(at: try number(at: 0, what: "index")) }
    case .move: try sayingAMissingDatabase { try move() }
    case .remove: try sayingAMissingDatabase { try remove() }
    case .edit: try sayingAMissingDatabase { try edit() }
    case .restore: try sayingAMissingDatabase { try restore() }
    case .undo: try sayingAMissingDatabase { try undo() }
    case .erase: try sayingAMissingDatabase { try erase() }
    case .purge: try purge()
    case .trim: try sayingAMissingDatabase { try trim() }
    case .list: try list()
    case .replay: try replay()
    case .log: try log()
    case .streams: try streams()
    case .diff: try diff()
    case .export: try export()
    case .import: try importLines()
    case .verify: try verify()
    case .backup: try backup()
    case .initialize: try initialize()
    case .serve: try serve()
    case .token: try token()
    case .clone: try clone()
    case .sync: try sync()
    case .status: try status()
    case .completions: try completions()
    case .help: try help()
    }
  }

  /// Runs a write that must find something in the log (an item, an
  /// index, an event, a seq). Refused on a database that does not exist,
  /// it says so, as a read does: a mistyped --db is said, not searched as
  /// an empty log ("no item … has an id starting with …"). Looked at only
  /// once refused: a write that succeeds pays nothing for it. A version
  /// that does not match stays exit 75 (SPEC), a missing database being
  /// a log at version 0 to a write: a script retries on it.
  private func sayingAMissingDatabase(_ write: () throws -> Void) throws {
    do {
      try write()
    } catch let refusal as MsglogError where [.notFound, .refused].contains(refusal.category) {
      do {
        _ = try openLog(forWriting: false).headSeq()
      } catch let missing as MsglogError {
        if case .noDatabase = missing { throw missing }
      }
      throw refusal
    }
  }

  // MARK: - What every command may use

  var json: Bool { args.has(Options.json) }

  /// `--db`, else `MSGLOG_DB`, else `./msglog.lmdb`.
  var location: String {
    get throws {
      let path = try args[Options.db] ?? variable("MSGLOG_DB") ?? "msglog.lmdb"
      guard !path.isEmpty else { throw CommandLineError.usage("--db needs a path") }
      return path
    }
  }

  /// `--stream`, else `MSGLOG_STREAM`, else `main`.
  var stream: StreamName {
    get throws {
      let given = args[Options.stream]
      let name = try given ?? variable("MSGLOG_STREAM") ?? "main"
      do {
        return try StreamName(validating: name)
      } catch {
        // Named from the environment: said so.
        guard given == nil else { throw error }
        throw CommandLineError.usage("MSGLOG_STREAM: \(error)")
      }
    }
  }

  /// The environment variable `name`, nil when unset or empty; refused
  /// when it is not UTF-8 (`MsglogCLI.main` keeps such a value as NUL).
  func variable(_ name: String) throws -> String? {
    guard let value = environment[name], !value.isEmpty else { return nil }
    guard !value.contains("\u{0}") else { throw CommandLineError.usage("\(name) is not valid UTF-8") }
    return value
  }

  /// The operand at `index` as a number.
  func number(at index: Int, what: String) throws -> UInt64 {
    try Arguments.number(operands[index], what: what)
  }

  /// The log, for reading only (never creates, needs no write permission) or for writing.
  func openLog(forWriting: Bool) throws -> EventLog {
    try EventLog(
      try location,
      configuration: .init(access: forWriting ? .readWrite : .readOnly, lmdbAssertionHandler: lmdbAssertionHandler))
  }

  /// Runs a read command's body in one snapshot. On a database read
  /// without a lock (it is read-only to us) the body may run again, so its
  /// output is held back until the read is known sound.
  func read<R>(_ body: (borrowing LogSnapshot) throws -> R) throws -> R {
    let log = try openLog(forWriting: false)
    guard log.readsWithoutLock else { return try log.read(body) }
    stdout.hold()
    let result: R
    do {
      result = try log.read { snapshot in
        stdout.discardHeld()
        return try body(snapshot)
      }
    } catch {
      // What an attempt that raced a commit printed is not to be trusted.
      if case MsglogError.changedDuringRead = error { stdout.discardHeld() }
      try stdout.release()
      throw error
    }
    try stdout.release()
    return result
  }
}
