import MsglogCore

/// Help pages, generated from the declaration table.
enum Help {
  /// `msglog --help`.
  static var overview: String {
    """
    USAGE: msglog [--db PATH] [--stream NAME] [--json] COMMAND [ARGS]

    OVERVIEW: Ordered lists of messages kept as an event-sourced log, in LMDB
    or PostgreSQL. Every change is an immutable event with a global sequence
    number; a stream's list is the replay of its events, the same on every
    replay and at any past seq.

    COMMANDS:
    \(table(CommandDeclaration.ordered.map { ($0.name.rawValue, $0.summary) }))
    OPTIONS:
    \(table((Options.shared + Options.meta).map { ($0.synopsis, $0.help) }))
    Options may stand before or after the command; '--' ends them, so a message
    may start with '-'. Exit status: 0 success, 1 refused or failed, 64 usage
    error, 75 version conflict (--expect-version).

    See 'msglog help COMMAND' for one command.

    """
  }

  /// `msglog help COMMAND`: USAGE, OVERVIEW, ARGUMENTS, OPTIONS, EXAMPLE.
  static func page(_ command: CommandDeclaration) -> String {
    var out = "USAGE: \(command.usage)\n\nOVERVIEW: " + wrap(command.overview, indent: 10) + "\n"
    if !command.arguments.isEmpty {
      out += "\nARGUMENTS:\n" + table(command.arguments.map { ($0.name, $0.help) })
    }
    out += "\nOPTIONS:\n" + table(command.listedOptions.map { ($0.synopsis, $0.help) })
    out +=
      "\nEXAMPLE:\n"
      + command.example.split(separator: "\n", omittingEmptySubsequences: false).map { "  " + $0 }
      .joined(separator: "\n") + "\n"
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

  static func table(_ rows: [(String, String)]) -> String {
    let width = rows.map { TerminalText.displayWidth($0.0) }.max() ?? 0
    return rows.map { "  " + padded($0.0, to: width) + "  " + $0.1 + "\n" }.joined()
  }
}

/// `text` followed by spaces up to `width` columns (a left-aligned column).
func padded(_ text: String, to width: Int) -> String {
  text + String(repeating: " ", count: max(0, width - TerminalText.displayWidth(text)))
}
