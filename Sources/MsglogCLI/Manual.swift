import Msglog

/// The man page, `msglog.1`, generated from the declaration table
/// (`msglog help --man`).
enum Manual {
  /// The date of this version's manual: fixed, so that regenerating it
  /// changes nothing until the commands do.
  static let date = "2026-11-30"

  static var page: String {
    var out = """
      .TH MSGLOG 1 "\(date)" "msglog \(msglogVersion)" "User Commands"
      .SH NAME
      msglog \\- ordered lists of messages kept as an event\\-sourced log
      .SH SYNOPSIS
      .B msglog
      [\\fB\\-\\-db\\fR \\fIPATH\\fR] [\\fB\\-\\-stream\\fR \\fINAME\\fR] [\\fB\\-\\-json\\fR] \\fICOMMAND\\fR [\\fIARGS\\fR]
      .SH DESCRIPTION
      msglog keeps ordered lists of messages \\(em a chat, a reorderable card board \\(em as an
      event\\-sourced log in LMDB or PostgreSQL. Every change (append, insert, remove by UUID, move from one
      index to another) is an immutable event with a global sequence number; a stream's list is
      the replay of its events, identical on every replay and at any past point.
      .PP
      Options may stand before or after the command and its arguments; \\fB\\-\\-\\fR ends them.
      Every value option also has a \\fB\\-\\-name=value\\fR form.
      .SH COMMANDS

      """
    for command in CommandDeclaration.ordered {
      out += ".TP\n" + synopsis(command) + "\n" + escape(command.overview) + "\n"
      if !command.arguments.isEmpty || !command.options.isEmpty {
        out += ".RS\n"
        for argument in command.arguments {
          out += ".TP\n.I \(escape(argument.name))\n\(escape(argument.help))\n"
        }
        for option in command.options { out += ".TP\n\(optionSynopsis(option))\n\(escape(option.help))\n" }
        out += ".RE\n"
      }
    }
    out += ".SH OPTIONS\n"
    for option in Options.shared + Options.meta { out += ".TP\n\(optionSynopsis(option))\n\(escape(option.help))\n" }
    out += """
      .SH ENVIRONMENT
      .TP
      .B MSGLOG_DB
      The database when \\fB\\-\\-db\\fR is not given: an LMDB directory, or a
      \\fBpostgres://\\fR or \\fBpostgresql://\\fR URL (PostgreSQL).
      .TP
      .BR PGHOST ", " PGPORT ", " PGUSER ", " PGPASSWORD ", " PGDATABASE ", " PGSERVICE ", " PGSSLMODE ", ..."
      libpq's environment fills in what a PostgreSQL URL leaves out.
      .TP
      .B MSGLOG_STREAM
      The stream when \\fB\\-\\-stream\\fR is not given (never narrows \\fBexport\\fR).
      .TP
      .B MSGLOG_TOKEN
      The bearer token \\fBserve\\fR requires of every API request when \\fB\\-\\-token\\fR is not given
      (needed to listen beyond localhost), and the one \\fBclone\\fR and \\fBsync\\fR send to a remote.
      .TP
      .B NO_COLOR
      When set, text tables are never coloured.
      .SH EXIT STATUS
      .TP
      .B 0
      Success, including \\fBhelp\\fR, \\fB\\-\\-version\\fR, a move onto itself, and a reader that closed the pipe.
      .TP
      .B 1
      Refused or failed: an unknown or ambiguous id, an index out of range, a missing, unreadable,
      read\\-only or foreign database, damage, a bad import line, a failed write to stdout.
      .TP
      .B 64
      Usage: an unknown command or option, an option the command does not use, a malformed argument.
      .TP
      .B 75
      \\fB\\-\\-expect\\-version\\fR did not match: re\\-read and retry.
      .SH EXAMPLES
      .nf

      """
    for command in CommandDeclaration.ordered {
      for line in command.example.split(separator: "\n") { out += escape(String(line)) + "\n" }
    }
    out += """
      .fi
      .SH SEE ALSO
      The repository's README.md and docs/REFERENCE.md (the contract: outputs, JSON shapes,
      import format) and docs/FORMAT.md (the on\\-disk format).

      """
    return out
  }

  static func synopsis(_ command: CommandDeclaration) -> String {
    var parts = ["\\fB\(command.name.rawValue)\\fR"]
    parts += command.options.map { "[" + optionSynopsis($0) + "]" }
    parts += command.arguments.map { argument in
      let word = "\\fI\(escape(argument.name))\\fR" + (argument.repeating ? "..." : "")
      return argument.optional ? "[\(word)]" : word
    }
    return parts.joined(separator: " ")
  }

  static func optionSynopsis(_ option: OptionDeclaration) -> String {
    (option.short.map { "\\fB\\-\($0)\\fR, " } ?? "") + "\\fB\\-\\-\(escape(option.name))\\fR"
      + (option.value.map { " \\fI\($0)\\fR" } ?? "") + (option.repeatable ? "..." : "")
  }

  /// Escapes text for roff: backslashes, hyphens, a leading dot or quote,
  /// and anything beyond ASCII as `\[uXXXX]` (roff reads Latin-1 otherwise).
  static func escape(_ text: String) -> String {
    var out = ""
    for scalar in text.unicodeScalars {
      switch scalar {
      case "\\": out += "\\e"
      case "-": out += "\\-"
      case _ where scalar.value > 0x7E:
        let hex = String(scalar.value, radix: 16, uppercase: true)
        out += "\\[u" + String(repeating: "0", count: max(0, 4 - hex.count)) + hex + "]"
      default: out.unicodeScalars.append(scalar)
      }
    }
    if out.hasPrefix(".") || out.hasPrefix("'") { out = "\\&" + out }
    return out
  }
}
