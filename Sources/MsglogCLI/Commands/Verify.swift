import Msglog
import MsglogWire

extension Invocation {
  /// `verify [--repair]`.
  func verify() throws {
    if args.has(Options.repair) { return try repair() }
    var progress = VerifyProgressBar(stderr: stderr)
    let report = try read { try $0.verify { progress.update($0) } }
    progress.finish()
    try printReport(report)
  }

  /// Rebuilds the derived tables from the events when verify finds them
  /// wrong and the log itself is sound.
  func repair() throws {
    let log = try openLog(forWriting: true)
    let result: EventLog.RepairReport
    var progress = VerifyProgressBar(stderr: stderr)
    defer { progress.finish() }
    do {
      result = try log.repair { progress.update($0) }
      progress.finish()
    } catch MsglogError.unrepairable(let problems) {
      progress.finish()
      for problem in problems { try stdout.line(problem) }
      throw MsglogError.unrepairable(problems: problems)
    }
    for problem in result.repaired { try stdout.line("repaired: " + problem) }
    if !result.repaired.isEmpty { stderr.note("msglog: rebuilt the derived tables from the log") }
    try printReport(result.after)
  }

  func printReport(_ report: VerifyReport) throws {
    if json {
      try stdout.document { $0.verifyReport(report) }
    } else if report.isClean {
      try stdout.line(
        "ok: \(report.events) \(report.events == 1 ? "event" : "events"), \(report.streams) \(report.streams == 1 ? "stream" : "streams"), "
          + "\(report.liveItems) live \(report.liveItems == 1 ? "item" : "items")")
    } else {
      for problem in report.problems { try stdout.line(problem) }
    }
    guard report.isClean else {
      throw CommandLineError.failed(
        "verify found \(report.problems.count) \(report.problems.count == 1 ? "problem" : "problems")",
        hint: report.logIsIntact
          ? "the events are sound; 'msglog verify --repair' rebuilds the derived tables from them"
          : "the log itself is damaged where named; restore it from an export or a backup")
    }
  }
}
