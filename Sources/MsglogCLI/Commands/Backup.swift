import Msglog
import MsglogWire

extension Invocation {
  /// `backup DEST [--compact]`: a hot copy of an LMDB database.
  func backup() throws {
    let destination = operands[0]
    guard !destination.isEmpty else { throw CommandLineError.usage("'backup' needs DEST, a path") }
    let compact = args.has(Options.compact)
    let report = try openLog(forWriting: false).backup(to: destination, compact: compact)
    if json {
      try stdout.document { $0.backupReport(report, path: destination, compact: compact) }
    } else {
      try stdout.line(
        "backed up \(report.events) \(report.events == 1 ? "event" : "events") (seq \(report.seq)) to "
          + "\(TerminalText.escape(destination)), \(Self.mebibytes(report.bytes)) MiB")
    }
  }

  /// A size in MiB with one decimal, as `du -h` would round it (up, so a
  /// copy is never shown as 0.0).
  static func mebibytes(_ bytes: UInt64) -> String {
    let tenths = (bytes * 10 + (1 << 20) - 1) >> 20
    return "\(tenths / 10).\(tenths % 10)"
  }
}
