import Msglog
import MsglogWire

#if canImport(Glibc)
  import Glibc
#endif

extension Invocation {
  /// `import [FILE]`: JSON lines, all or nothing.
  func importLines() throws {
    let stream = try stream
    // A file is read a block at a time as the import goes; standard input
    // (a pipe, maybe) is read whole first, so that it can be read again
    // when the bulk build gives way to the ledger.
    let file = operands.first.flatMap { $0 == "-" ? nil : $0 }
    let fd = try file.map { path throws(MsglogError) in try ImportInput.open(path) }
    defer { fd.map { _ = close($0) } }
    let redirected = file == nil ? stdin.regularFile : nil
    let input = file == nil && redirected == nil ? try stdin.readAll() : []
    let log = try openLog(forWriting: true)
    var progress = Progress("importing", total: 0, stderr: stderr)
    defer { progress.finish() }
    let report = { (done: Int, total: Int) in
      if progress.total != total { progress = Progress("importing", total: total, unit: "lines", stderr: stderr) }
      progress.update(done)
    }
    let summary =
      if let file, let fd {
        try log.importLines(from: .file(descriptor: fd, shown: file), defaultStream: stream, progress: report)
      } else if let redirected {
        try log.importLines(from: .file(descriptor: redirected, shown: "stdin"), defaultStream: stream, progress: report)
      } else {
        try log.importLines(input, defaultStream: stream, progress: report)
      }
    progress.finish()
    if json {
      try stdout.document { $0.importResult(summary) }
    } else {
      try stdout.line(
        "imported \(summary.imported) \(summary.imported == 1 ? "event" : "events"); the head is seq \(summary.head)")
    }
  }
}
