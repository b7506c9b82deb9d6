import Msglog
import MsglogWire

#if canImport(Glibc)
  import Glibc
#endif

extension Invocation {
  /// `import [FILE]`: JSON lines, all or nothing.
  func importLines() throws {
    let stream = try stream
    let input: [UInt8]
    if let file = operands.first, file != "-" {
      input = try InputText.readFile(file)
    } else {
      input = try stdin.readAll()
    }
    let log = try openLog(forWriting: true)
    var progress = Progress("importing", total: 0, stderr: stderr)
    defer { progress.finish() }
    // Consumed: the bytes are let go once read, not held through the write.
    let summary = try log.importLines(consume input, defaultStream: stream) { done, total in
      if progress.total != total { progress = Progress("importing", total: total, stderr: stderr) }
      progress.update(done)
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
