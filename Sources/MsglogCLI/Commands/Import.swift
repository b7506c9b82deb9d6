import CHeap
import Msglog
import MsglogWire

#if canImport(Glibc)
  import Glibc
#endif

extension Invocation {
  /// `import [FILE]`: JSON lines, all or nothing.
  func importLines() throws {
    let stream = try stream
    let source = try openImportSource()
    defer { source.close() }
    if ImportSource.hugePageInputs.contains(source.bytes) { _ = msglog_heap_prefer_huge_pages(ImportSource.hugeHeap) }
    // Stdin redirected from a file is read with pread, which leaves its
    // offset: move it to the end, as reading it would (a script's next
    // command reads after the import's lines, not them again).
    defer { if case .file(0, _, _) = source { lseek(0, 0, SEEK_END) } }
    let log = try openLog(forWriting: true)
    var progress = Progress("importing", total: 0, stderr: stderr)
    defer { progress.finish() }
    let report = { (done: Int, total: Int) in
      if progress.total != total { progress = Progress("importing", total: total, unit: "lines", stderr: stderr) }
      progress.update(done)
    }
    let summary =
      switch source {
      case .file(let fd, let shown, _):
        try log.importLines(from: .file(descriptor: fd, shown: shown), defaultStream: stream, progress: report)
      case .memory(let bytes):
        try log.importLines(bytes, defaultStream: stream, progress: report)
      }
    progress.finish()
    try reporting(summary.imported > 0 ? .imported(summary) : nil) {
      if json {
        try stdout.document { $0.importResult(summary) }
      } else {
        try stdout.line(
          "imported \(summary.imported) \(summary.imported == 1 ? "event" : "events"); the head is seq \(summary.head)")
      }
    }
  }

  /// Where an import's lines come from: a regular file (FILE, or stdin
  /// redirected from one), read as the import goes; a pipe (stdin, or a
  /// FILE such as `<(…)`) is first copied into a temporary file, since an
  /// import may read its lines twice (the bulk build giving way to the
  /// ledger), or held in memory when no temporary file can be made.
  private enum ImportSource {
    case file(Int32, shown: String, owned: Bool)
    case memory([UInt8])

    func close() {
      if case .file(let fd, _, true) = self { _ = Glibc.close(fd) }
    }

    /// How many bytes of lines are left to read: a file's from where its
    /// descriptor is (stdin redirected from a file may be read from the middle).
    var bytes: Int {
      switch self {
      case .file(let fd, _, _):
        var status = stat()
        guard fstat(fd, &status) == 0 else { return 0 }
        return max(Int(status.st_size) - max(Int(lseek(fd, 0, SEEK_CUR)), 0), 0)
      case .memory(let bytes): return bytes.count
      }
    }

    /// The inputs whose import takes its heap in huge pages. From about a
    /// mebibyte, an import fills tens of megabytes of fresh memory (LMDB's
    /// dirty pages, its tables and sorts), and a page fault costs about
    /// 2 µs on a virtual machine: 3,300 of them were a sixth of a 3 MB
    /// import's time, which huge pages cut by 12–15 % (an 8 MiB one's by
    /// a sixth), for 9–26 MiB more at its peak. Smaller, clearing a huge
    /// page costs more than the faults it saves (a one-line import took
    /// 5 ms instead of 3); larger, an import gained nothing measurable
    /// (a 15.9 MiB one was slower) and kept 20–80 MiB more.
    static let hugePageInputs = (1 << 20)..<(8 << 20)
    /// The heap made ready: its growth is kept, so once and generously.
    static let hugeHeap = 64 << 20
  }

  private func openImportSource() throws -> ImportSource {
    if let path = operands.first, path != "-" {
      let fd = try ImportInput.open(path)
      if ImportInput.isRegularFile(fd) { return .file(fd, shown: path, owned: true) }
      defer { close(fd) }
      for directory in try spoolDirectories {
        switch try spoolIntoTemporaryFile(from: fd, what: path, in: directory) {
        case .file(let spool): return .file(spool, shown: path, owned: true)
        case .memory(let bytes): return .memory(bytes)
        case nil: continue
        }
      }
      return .memory(try readDescriptor(fd, what: path))
    }
    if let fd = stdin.regularFile { return .file(fd, shown: "stdin", owned: false) }
    for directory in try spoolDirectories {
      switch try stdin.spool(in: directory) {
      case .file(let spool): return .file(spool, shown: "stdin", owned: true)
      case .memory(let bytes): return .memory(bytes)
      case nil: continue
      }
    }
    return .memory(try stdin.readAll())
  }

  /// Where a piped import is kept while it is read (`ImportInput.spoolDirectories`).
  private var spoolDirectories: [String] {
    get throws { ImportInput.spoolDirectories(for: try location, temporary: environment["TMPDIR"]) }
  }
}
