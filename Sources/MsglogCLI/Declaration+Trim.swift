/// `trim` (docs/REFERENCE.md, "Forgetting on purpose"), declared once like
/// every other command (Declaration.swift).
extension Options {
  static let trimBefore = OptionDeclaration(
    name: "before", value: "SEQ", help: "drop the events before this seq (history begins there)")
  static let olderThan = OptionDeclaration(
    name: "older-than", value: "DURATION", help: "drop the events older than this: 90d, 12h, 30m")
  static let dryRun = OptionDeclaration(name: "dry-run", help: "print what would go, and change nothing")
}

extension CommandDeclaration {
  static let trim = CommandDeclaration(
    name: .trim, summary: "drop history older than a horizon, keeping every list",
    overview: """
      Drop the events before a horizon H (--before SEQ, or with --older-than DURATION the \
      first event younger than that; never past the head), keeping each stream's list as it \
      was after seq H-1 as its base. Every list, 'replay --at' from H-1 on, diff, log (from H) \
      and follow are exactly as before; seqs and versions are never reused. Below the horizon \
      replay --at, diff, 'log --from' and follow say 'history before seq H was trimmed' (exit \
      1). export starts with one base line per stream. When a later event brings back or \
      erases an item removed before H, the horizon moves down to that item's remove (a note \
      says so). Prints 'trimmed N events before seq H'. The dropped bytes may stay in the \
      database's free pages (or PostgreSQL's table files) until 'msglog purge'. Refused in a \
      replica.
      """,
    options: [Options.trimBefore, Options.olderThan, Options.dryRun], shared: [Options.db, Options.json],
    example: "msglog trim --before 1000 --dry-run\nmsglog trim --older-than 90d && msglog purge")
}
