import MsglogCore

/// What a command accepts, and its help page.
struct CommandSpec {
  var name: String
  /// One line for the command table of `msglog --help`.
  var summary: String
  /// Options beyond the global ones.
  var options: [String]
  /// Positional arguments allowed, as a range.
  var arity: ClosedRange<Int>
  var usage: String
  var overview: String
  var arguments: [(String, String)]
  var optionHelp: [(String, String)]
  var example: String
  /// Which of the options every command may take (`--db`, `--stream`,
  /// `--json`) this one uses; any other is a usage error, never ignored.
  var shared: Set<String> = ["db", "stream", "json"]

  /// Refuses options that do not belong to this command and a wrong number of arguments.
  func check(_ args: Arguments, positionals: [String]) throws(MsglogError) {
    for option in args.order
    where option != "help" && option != "version" && !shared.contains(option) && !options.contains(option) {
      throw .usage("option --\(option) does not apply to '\(name)'", hint: "see 'msglog help \(name)'")
    }
    if positionals.count < arity.lowerBound {
      let missing = arguments[positionals.count].0
      throw .usage("'\(name)' needs \(missing)", hint: "usage: \(usage)")
    }
    if positionals.count > arity.upperBound {
      throw .usage(
        "unexpected argument \(TerminalText.quoted(positionals[arity.upperBound])) for '\(name)'",
        hint: "usage: \(usage)")
    }
  }

  /// The help page: USAGE, OVERVIEW, ARGUMENTS, OPTIONS, EXAMPLE.
  var help: String {
    var out = "USAGE: \(usage)\n\nOVERVIEW: " + CommandSpec.wrap(overview, indent: 10) + "\n"
    if !arguments.isEmpty {
      out += "\nARGUMENTS:\n" + CommandSpec.table(arguments)
    }
    out += "\nOPTIONS:\n" + CommandSpec.table(optionHelp + CommandSpec.globalHelp)
    out +=
      "\nEXAMPLE:\n"
      + example.split(separator: "\n", omittingEmptySubsequences: false)
      .map { "  " + $0 }.joined(separator: "\n") + "\n"
    return out
  }

  /// Word-wraps a paragraph to 80 columns; continuation lines are indented.
  static func wrap(_ text: String, indent: Int, width: Int = 80) -> String {
    var lines: [String] = []
    var line = ""
    var column = indent
    for word in text.split(separator: " ") {
      if !line.isEmpty, column + 1 + word.count > width {
        lines.append(line)
        line = ""
        column = 0
      }
      if !line.isEmpty {
        line += " "
        column += 1
      }
      line += word
      column += word.count
    }
    lines.append(line)
    return lines.joined(separator: "\n")
  }

  static let globalHelp: [(String, String)] = [
    ("--db PATH", "database directory (default: $MSGLOG_DB, else ./msglog.lmdb)"),
    ("--stream NAME", "stream to use (default: $MSGLOG_STREAM, else main)"),
    ("--json", "print JSON instead of text"),
    ("-h, --help", "show this help"),
  ]

  static func table(_ rows: [(String, String)]) -> String {
    let width = rows.map { TerminalText.displayWidth($0.0) }.max() ?? 0
    return rows.map { "  " + padded($0.0, to: width) + "  " + $0.1 + "\n" }
      .joined()
  }

  static let writeOptions: [(String, String)] = [
    ("--expect-version N", "refuse (exit 75) unless the stream is at version N")
  ]
  static let textOptions: [(String, String)] = [
    ("--sender NAME", "who wrote the message"),
    ("--id UUID", "use this id instead of a new random one"),
    ("--lines", "read stdin, one message per line, all in one transaction"),
  ]

  static let all: [CommandSpec] = [
    CommandSpec(
      name: "append", summary: "append a message at the end of the stream",
      options: ["lines", "sender", "id", "expect-version"], arity: 0...Int.max,
      usage: "msglog append [--sender NAME] [--id UUID] [--lines] [TEXT...]",
      overview: """
        Append a message at the end of the stream and print its id. The words of TEXT are \
        joined by spaces; without TEXT the message is all of stdin, less one trailing newline. \
        With --lines every non-blank line of stdin becomes one message, all appended in a single \
        transaction.
        """,
      arguments: [("TEXT", "the message (default: stdin)")],
      optionHelp: textOptions + writeOptions,
      example: "msglog append --sender ann \"see you at 10\"\nprintf 'one\\ntwo\\n' | msglog append --lines"),
    CommandSpec(
      name: "insert", summary: "insert a message at an index",
      options: ["lines", "sender", "id", "expect-version"], arity: 1...Int.max,
      usage: "msglog insert [--sender NAME] [--id UUID] [--lines] INDEX [TEXT...]",
      overview: """
        Insert a message so that it ends at INDEX (0 is the top; the item count appends) and \
        print its id. Text is read as for append; with --lines the messages go to INDEX, \
        INDEX+1, and so on.
        """,
      arguments: [("INDEX", "position of the new item, 0…count"), ("TEXT", "the message (default: stdin)")],
      optionHelp: textOptions + writeOptions,
      example: "msglog insert 0 \"pinned: read the rules\""),
    CommandSpec(
      name: "move", summary: "move an item from one index to another",
      options: ["expect-version"], arity: 2...2,
      usage: "msglog move FROM TO",
      overview: """
        Move the item at index FROM so that it ends at index TO, as a dragged cell does. \
        Moving an item onto its own index changes nothing and appends no event.
        """,
      arguments: [("FROM", "the item's current index"), ("TO", "its final index")],
      optionHelp: writeOptions,
      example: "msglog move 3 0"),
    CommandSpec(
      name: "remove", summary: "remove an item by id",
      options: ["expect-version"], arity: 1...1,
      usage: "msglog remove ID",
      overview: """
        Remove a live item of the stream. ID is its full UUID in any case, or at least 8 \
        leading characters of it (the short id 'list' prints) that match exactly one item.
        """,
      arguments: [("ID", "a UUID, or a unique prefix of 8 or more characters")],
      optionHelp: writeOptions,
      example: "msglog remove 3f2a1b4c"),
    CommandSpec(
      name: "list", summary: "print the stream's items in order",
      options: [], arity: 0...0,
      usage: "msglog list",
      overview: """
        Print the stream's items in order, one per line: index, short id, sender (- when \
        none) and text, with control characters escaped. A stream with no events is empty.
        """,
      arguments: [], optionHelp: [],
      example: "msglog --stream standup list"),
    CommandSpec(
      name: "replay", summary: "rebuild the stream from the log, now or at a past seq",
      options: ["at"], arity: 0...0,
      usage: "msglog replay [--at SEQ]",
      overview: """
        Rebuild the stream from the log and print it as 'list' does: with --at, as it was \
        right after event SEQ (0 is empty); without, a full replay up to the head.
        """,
      arguments: [],
      optionHelp: [("--at SEQ", "stop after this event (0…head)")],
      example: "msglog replay --at 42"),
    CommandSpec(
      name: "log", summary: "print the events, oldest first",
      options: ["from", "limit", "all"], arity: 0...0,
      usage: "msglog log [--from SEQ] [--limit N] [--all]",
      overview: """
        Print the stream's events, oldest first, one per line: seq, time, stream, version, \
        op, item id and the op's fields.
        """,
      arguments: [],
      optionHelp: [
        ("--from SEQ", "start at this seq"), ("--limit N", "print at most N events"),
        ("--all", "events of every stream"),
      ],
      example: "msglog log --all --from 100 --limit 20"),
    CommandSpec(
      name: "streams", summary: "list the streams with their counts and versions",
      options: [], arity: 0...0,
      usage: "msglog streams",
      overview: "List every stream with its live item count, its version and the seq of its last event.",
      arguments: [], optionHelp: [],
      example: "msglog streams", shared: ["db", "json"]),
    CommandSpec(
      name: "export", summary: "print every event as JSON lines",
      options: [], arity: 0...0,
      usage: "msglog export",
      overview: """
        Print every event of every stream, oldest first, as JSON lines (the 'log --json' form). \
        'msglog export | msglog --db other import' rebuilds the same log in an empty database. \
        With --stream, only that stream's events (which import accepts as they are).
        """,
      arguments: [], optionHelp: [],
      example: "msglog export > backup.jsonl"),
    CommandSpec(
      name: "import", summary: "apply JSON lines atomically",
      options: [], arity: 0...1,
      usage: "msglog import [FILE]",
      overview: """
        Apply JSON lines from FILE (or stdin, or '-') atomically: every line is validated as \
        the command line would validate it, and a bad line is reported with its number and \
        nothing is written. Ops: append, insert, remove, move; 'export' output is accepted as is.
        """,
      arguments: [("FILE", "JSON lines to apply (default: stdin)")],
      optionHelp: [],
      example: "msglog --db copy.lmdb import backup.jsonl\necho '{\"op\":\"append\",\"text\":\"hi\"}' | msglog import"),
    CommandSpec(
      name: "verify", summary: "check checksums, seqs and derived tables against a replay",
      options: ["repair"], arity: 0...0,
      usage: "msglog verify [--repair]",
      overview: """
        Check every record's checksum, that seqs run 1…head without a gap, that the log \
        replays cleanly, and that the derived tables (stream heads, order, id index) equal a \
        full replay. Prints 'ok' and counts, or each problem found (exit 1). With --repair, \
        derived tables that differ are rebuilt from the events (the events themselves are \
        never changed).
        """,
      arguments: [],
      optionHelp: [("--repair", "rebuild the derived tables from the log when they differ")],
      example: "msglog verify\nmsglog verify --repair", shared: ["db", "json"]),
    CommandSpec(
      name: "help", summary: "show help for msglog or a command",
      options: [], arity: 0...1,
      usage: "msglog help [COMMAND]",
      overview: "Show the overview of msglog, or the help page of COMMAND.",
      arguments: [("COMMAND", "a command name")], optionHelp: [],
      example: "msglog help move", shared: []),
  ]

  static func named(_ name: String) -> CommandSpec? { all.first { $0.name == name } }

  static let overviewHelp = """
    USAGE: msglog [--db PATH] [--stream NAME] [--json] COMMAND [ARGS]

    OVERVIEW: Ordered lists of messages kept as an event-sourced log in LMDB.
    Every change is an immutable event with a global sequence number; a stream's
    list is the replay of its events, the same on every replay and at any past seq.

    COMMANDS:
    \(table(all.map { ($0.name, $0.summary) }))
    OPTIONS:
    \(table(globalHelp + [("--version", "print the version")]))
    Options may stand before or after the command; '--' ends them, so a message
    may start with '-'. Exit status: 0 success, 1 refused or failed, 64 usage
    error, 75 version conflict (--expect-version).

    See 'msglog help COMMAND' for one command.

    """
}

/// `text` followed by spaces up to `width` characters (left-aligned column).
func padded(_ text: String, to width: Int) -> String {
  text + String(repeating: " ", count: max(0, width - TerminalText.displayWidth(text)))
}
