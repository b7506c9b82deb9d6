import Foundation
import Msglog
import MsglogTestSupport
import Testing

/// `msglog import` into an empty database takes the bulk path
/// (`BulkImport`): what it builds verifies clean and exports the same lines.
@Suite struct BulkImportCLITests {
  @Test func anImportIntoAnEmptyDatabaseVerifiesAndExportsTheSameLines() throws {
    let s = Sandbox()
    let source = s.dir + "/source.lmdb", copy = s.dir + "/copy.lmdb"
    do { _ = try EventLog(source).perform(workload(count: 3_000)) }
    let exported = s.run(["--db", source, "export"], useDefaultDB: false)
    #expect(exported.code == 0)
    let imported = s.run(["--db", copy, "import"], stdin: Data(exported.stdout.utf8), useDefaultDB: false)
    #expect(imported.code == 0, "\(imported)")
    #expect(imported.stdout.hasPrefix("imported "), "\(imported.stdout)")
    let verified = s.run(["--db", copy, "verify"], useDefaultDB: false)
    #expect(verified.code == 0, "\(verified)")
    #expect(s.run(["--db", copy, "export"], useDefaultDB: false).stdout == exported.stdout)
  }
}

/// An import of 1–8 MiB takes its heap in huge pages (the CLI's
/// `ImportSource.hugePageInputs`): seen from outside, as the kernel reports
/// the running process's memory — its `[heap]` advised `MADV_HUGEPAGE`
/// (`hg` among the mapping's `VmFlags` in /proc/PID/smaps) wherever the
/// kernel has transparent huge pages on; and a small import, one larger
/// than 8 MiB, one with less than a mebibyte left to read, or one under a
/// limit on the data segment, leaves the heap as it is.
@Suite struct HugePageImportTests {
  /// Whether the kernel has transparent huge pages, and not off.
  static let kernelAllowsHugePages: Bool = {
    let mode = (try? String(contentsOfFile: "/sys/kernel/mm/transparent_hugepage/enabled", encoding: .utf8)) ?? ""
    return mode.contains("[always]") || mode.contains("[madvise]")
  }()

  @Test func aLargeImportAdvisesItsHeapAndASmallOrHugeOneDoesNot() throws {
    let s = Sandbox()
    let source = s.dir + "/source.lmdb"
    do { _ = try EventLog(source).perform(workload(count: 12_000)) }
    let lines = s.run(["--db", source, "export"], useDefaultDB: false).stdout
    let large = s.dir + "/large.jsonl", small = s.dir + "/small.jsonl"
    try lines.write(toFile: large, atomically: true, encoding: .utf8)
    let first = lines.split(separator: "\n").prefix(500).map { $0 + "\n" }.joined()
    try first.write(toFile: small, atomically: true, encoding: .utf8)
    #expect(lines.utf8.count > 1 << 20 && first.utf8.count < 1 << 20)

    let (largeRun, largeAdvised) = Self.importWatchingHeap(s, file: large, into: s.dir + "/large.lmdb")
    #expect(largeRun.code == 0, "\(largeRun)")
    #expect(largeAdvised == Self.kernelAllowsHugePages)
    #expect(s.run(["--db", s.dir + "/large.lmdb", "verify"], useDefaultDB: false).code == 0)
    #expect(s.run(["--db", s.dir + "/large.lmdb", "export"], useDefaultDB: false).stdout == lines)

    let (smallRun, smallAdvised) = Self.importWatchingHeap(s, file: small, into: s.dir + "/small.lmdb")
    #expect(smallRun.code == 0, "\(smallRun)")
    #expect(!smallAdvised)

    // 9 MiB of blank lines (counted, cheap to import) and one line.
    let huge = s.dir + "/huge.jsonl"
    try (String(repeating: "\n", count: 9 << 20) + first.split(separator: "\n")[0] + "\n")
      .write(toFile: huge, atomically: true, encoding: .utf8)
    let (hugeRun, hugeAdvised) = Self.importWatchingHeap(s, file: huge, into: s.dir + "/huge.lmdb")
    #expect(hugeRun.code == 0, "\(hugeRun)")
    #expect(!hugeAdvised)

    // What is left to read counts: stdin redirected from a file whose
    // first mebibyte (blank lines) was read already holds the small lines.
    let skipped = s.dir + "/skipped.jsonl"
    try (String(repeating: "\n", count: 1 << 20) + first).write(toFile: skipped, atomically: true, encoding: .utf8)
    let (skippedRun, skippedAdvised) = Self.importWatchingHeap(
      s,
      shell:
        "exec 0<'\(skipped)'; dd bs=1M skip=1 count=0 status=none; exec '\(Sandbox.binary)' --db '\(s.dir)/skipped.lmdb' import"
    )
    #expect(skippedRun.code == 0, "\(skippedRun)")
    #expect(!skippedAdvised)
    #expect(s.run(["--db", s.dir + "/skipped.lmdb", "export"], useDefaultDB: false).stdout == first)

    // Under a limit on the data segment the heap is left as it is (its
    // growth aborted a 1 MiB import under 64 MiB).
    let (limitedRun, limitedAdvised) = Self.importWatchingHeap(
      s, shell: "ulimit -d 1000000; exec '\(Sandbox.binary)' --db '\(s.dir)/limited.lmdb' import '\(large)'")
    #expect(limitedRun.code == 0, "\(limitedRun)")
    #expect(!limitedAdvised)
  }

  /// Runs `msglog import FILE` into `db`, reading its smaps until it ends;
  /// whether its heap was ever seen advised for huge pages.
  static func importWatchingHeap(_ s: Sandbox, file: String, into db: String) -> (Run, Bool) {
    watchingHeap(s.start(["--db", db, "import", file], useDefaultDB: false))
  }

  /// The same for an import a shell line starts (`exec`, so that the
  /// process watched is msglog's).
  static func importWatchingHeap(_ s: Sandbox, shell line: String) -> (Run, Bool) {
    watchingHeap(s.start(["-c", line], useDefaultDB: false, runner: "/bin/sh"))
  }

  /// Reads the child's smaps until it ends (or its heap is seen advised).
  /// A heap never seen advised counts only if it was seen, unadvised, a
  /// few times while the child ran: a child that ended before a sample
  /// proves nothing (`Issue.record`).
  static func watchingHeap(_ child: Sandbox.Child, sourceLocation: SourceLocation = #_sourceLocation) -> (Run, Bool) {
    let smaps = "/proc/\(child.process.processIdentifier)/smaps"
    var advised = false
    var seen = 0
    while child.process.isRunning, !advised {
      // Read to its end: the kernel hands out smaps a page at a time.
      let text = FileHandle(forReadingAtPath: smaps).map { String(decoding: $0.readDataToEndOfFile(), as: UTF8.self) }
      switch Self.heap(in: text ?? "") {
      case true?: advised = true
      case false?: seen += 1
      case nil: break
      }
      usleep(200)
    }
    if !advised && seen < 3 {
      Issue.record("the import's heap was seen \(seen) times: too few to tell", sourceLocation: sourceLocation)
    }
    return (child.finish(), advised)
  }

  /// Whether a `[heap]` mapping of an smaps text is advised for huge
  /// pages (`hg` in its `VmFlags`); nil when it has none.
  static func heap(in smaps: String) -> Bool? {
    var inHeap = false
    var found: Bool? = nil
    for line in smaps.split(separator: "\n") {
      if let first = line.first, first.isHexDigit, line.contains("-") {
        inHeap = line.hasSuffix("[heap]")
        if inHeap, found == nil { found = false }
      } else if inHeap, line.hasPrefix("VmFlags:"), line.split(separator: " ").contains("hg") {
        return true
      }
    }
    return found
  }
}

/// A first import's scrub of its new database (`LMDBStore.scrubNewDatabase`)
/// reads every page in use through a mapping of the data file: held
/// whole, those pages stayed in the process until the unmap, and the
/// import's peak memory grew with its database (1,000,000 lines: 142 →
/// 326 MiB). The scan now lets go of each window it has scanned, so what
/// the process holds of files stays under half the data file's size
/// (sampled from /proc/PID/status as it runs; 17–19 MB of a 50 MB file
/// at 400,000 lines, so 600,000 for room).
@Suite struct ImportScrubMemoryTests {
  @Test func theScrubHoldsAWindowOfTheFileNotTheWholeFile() throws {
    let s = Sandbox()
    let lines = (0..<600_000).map { #"{"op":"append","text":"message \#($0) of the import"}"# + "\n" }.joined()
    let input = s.dir + "/lines.jsonl"
    try lines.write(toFile: input, atomically: true, encoding: .utf8)
    let db = s.dir + "/new.lmdb"
    let child = s.start(["--db", db, "import", input], useDefaultDB: false)
    let status = "/proc/\(child.process.processIdentifier)/status"
    var mostFileKiB = 0
    while child.process.isRunning {
      let text = FileHandle(forReadingAtPath: status).map { String(decoding: $0.readDataToEndOfFile(), as: UTF8.self) }
      for line in (text ?? "").split(separator: "\n") where line.hasPrefix("RssFile:") {
        mostFileKiB = max(mostFileKiB, Int(line.split(separator: " ").dropFirst().first ?? "") ?? 0)
      }
      usleep(500)
    }
    let run = child.finish()
    #expect(run.code == 0, "\(run)")
    let fileKiB = try #require(FileManager.default.attributesOfItem(atPath: db + "/data.mdb")[.size] as? Int) / 1024
    #expect(fileKiB > 64 * 1024, "the data file is \(fileKiB) KiB: too small to tell a window from the whole")
    #expect(
      mostFileKiB > 0 && mostFileKiB < fileKiB / 2, "held \(mostFileKiB) KiB of files; the data file is \(fileKiB) KiB")
  }
}
