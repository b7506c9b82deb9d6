import Msglog

/// `trim --before SEQ | --older-than DURATION [--dry-run]`.
extension Invocation {
  func trim() throws {
    let before = try args.number(Options.trimBefore)
    let olderThan = args[Options.olderThan]
    guard (before == nil) != (olderThan == nil) else {
      throw CommandLineError.usage("trim takes --before SEQ or --older-than DURATION (one of them)")
    }
    let age: Duration?
    if let olderThan {
      do {
        age = .milliseconds(try TokenLifetime(validating: olderThan).milliseconds)
      } catch {
        throw CommandLineError.usage(
          "invalid --older-than \(TerminalText.quoted(olderThan)): expected a number and d, h or m (90d, 12h, 30m)")
      }
    } else {
      age = nil
    }
    if before == 0 { throw CommandLineError.usage("invalid --before 0: history begins at seq 1") }
    let dryRun = args.has(Options.dryRun)
    let log = try openLog(forWriting: !dryRun)
    let trim = try age.map { try log.trim(olderThan: $0, dryRun: dryRun) } ?? log.trim(before: before!, dryRun: dryRun)
    let neededBack = { (asked: UInt64) in "a later event brings back or erases an item removed before \(asked)" }
    if trim.trimmed == 0 {
      stderr.note(
        "msglog: nothing to trim: history begins at seq \(trim.horizon)"
          + (trim.lowered.map { ", and cannot begin at \($0): " + neededBack($0) } ?? ""))
    } else if let asked = trim.lowered {
      stderr.note("msglog: note: trimmed before seq \(trim.horizon), not \(asked): " + neededBack(asked))
    }
    try reporting(dryRun || trim.trimmed == 0 ? nil : .trimmed(horizon: trim.horizon)) {
      if json {
        var fields = #"{"trimmed":\#(trim.trimmed),"horizon":\#(trim.horizon)"#
        if dryRun { fields += #","dryRun":true"# }
        try stdout.line(fields + "}")
      } else {
        let events = "\(trim.trimmed) \(trim.trimmed == 1 ? "event" : "events")"
        try stdout.line(
          dryRun ? "would trim \(events) before seq \(trim.horizon)" : "trimmed \(events) before seq \(trim.horizon)")
      }
    }
  }
}
