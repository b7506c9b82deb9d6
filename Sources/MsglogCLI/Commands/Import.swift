import Msglog
import MsglogWire

#if canImport(Glibc)
  import Glibc
#endif

extension Invocation {
  /// `import [FILE]`: JSON lines, all or nothing.
  func importLines() throws {
    let stream = try stream
    // A file is read a block at a time as the import goes (an import may
    // read it twice: when the bulk build gives way to the ledger). So is
    // stdin redirected from a file; a pipe is first copied into a
    // temporary file beside the database (in memory when none can be made).
    let file = operands.first.flatMap { $0 == "-" ? nil : $0 }
    let fd = try file.map { path throws(MsglogError) in try ImportInput.open(path) }
    defer { fd.map { _ = close($0) } }
    let spooled = file == nil && stdin.regularFile == nil ? try spoolStdin() : nil
    defer { spooled.map { _ = close($0) } }
    let redirected = file == nil ? stdin.regularFile ?? spooled : nil
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

  /// Standard input in a temporary file: in the directory that holds (or
  /// will hold) an LMDB database, on its disk, else in `TMPDIR`; nil when
  /// neither takes one.
  private func spoolStdin() throws -> Int32? {
    let location = try location
    var directories: [String] = []
    if !location.hasPrefix("postgres://") && !location.hasPrefix("postgresql://") {
      let parent = location.split(separator: "/", omittingEmptySubsequences: false).dropLast().joined(separator: "/")
      directories.append(location.contains("/") ? (parent.isEmpty ? "/" : parent) : ".")
    }
    directories.append(environment["TMPDIR"].flatMap { $0.isEmpty ? nil : $0 } ?? "/tmp")
    for directory in directories {
      if let fd = try stdin.spool(in: directory) { return fd }
    }
    return nil
  }
}
