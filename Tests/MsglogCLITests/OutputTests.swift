import Foundation
import MsglogTestSupport
import Testing

#if canImport(Glibc)
  import Glibc
#endif

/// Every write to stdout is checked: a full disk or an I/O error is
/// `msglog: write error: …` and exit 1 (a backup cut short must never end in
/// exit 0); a reader that went away ends the command quietly.
@Suite struct OutputTests {
  /// A database with enough events that `export` is many times 4 KiB.
  static func seeded() -> Sandbox {
    let s = Sandbox()
    let lines = (0..<200).map { "message \($0) " + String(repeating: "x", count: 60) }.joined(separator: "\n")
    #expect(s.run(["append", "--lines"], stdin: Data(lines.utf8)).code == 0)
    return s
  }

  /// A list's index column, counted up line by line: right-aligned to the
  /// widest index across every carry (9 → 10, 99 → 100, 999 → 1000), in
  /// `list` and `replay` alike, and as wide as a past list needs.
  @Test func indexesAreRightAlignedAcrossEveryCarry() {
    let s = Sandbox()
    let lines = (0..<1_001).map { "m\($0)" }.joined(separator: "\n")
    #expect(s.run(["append", "--lines"], stdin: Data(lines.utf8)).code == 0)
    for (command, count) in [(["list"], 1_001), (["replay"], 1_001), (["replay", "--at", "11"], 11)] {
      let out = s.run(command).stdout.split(separator: "\n")
      #expect(out.count == count, "\(command)")
      let width = String(count - 1).count
      for (i, line) in out.enumerated() {
        let index = String(repeating: " ", count: width - String(i).count) + String(i) + "  "
        #expect(line.hasPrefix(index) && line.hasSuffix("  m\(i)"), "\(command): \(line)")
      }
    }
  }

  @Test func exportIntoAFullFileSystemFails() throws {
    let s = Self.seeded()
    let mountPoint = s.dir + "/small"
    try FileManager.default.createDirectory(atPath: mountPoint, withIntermediateDirectories: false)
    try #require(mountTmpfs(at: mountPoint, size: "16k"), "this test mounts a 16 KiB tmpfs and needs root")
    defer { unmount(mountPoint) }
    let backup = mountPoint + "/backup.jsonl"
    _ = FileManager.default.createFile(atPath: backup, contents: nil)
    let handle = try #require(FileHandle(forWritingAtPath: backup))
    let r = s.start(["export"], stdout: handle).finish()
    try handle.close()
    #expect(r.code == 1, "\(r)")
    #expect(r.stderr == "msglog: write error: no space left on device\n", "\(r)")
    let written = try Data(contentsOf: URL(fileURLWithPath: backup)).count
    #expect(written < s.export().utf8.count, "the export fit; the test proves nothing")
  }

  @Test(arguments: [
    ["export"], ["list"], ["list", "--json"], ["log"], ["log", "--all", "--json"], ["streams"], ["verify"], ["replay"],
    ["--version"], ["help"],
  ])
  func writingIntoDevFullFails(_ args: [String]) throws {
    let s = Self.seeded()
    let handle = try #require(FileHandle(forWritingAtPath: "/dev/full"))
    let r = s.start(args, stdout: handle).finish()
    #expect(r.code == 1, "\(args): \(r)")
    #expect(r.stderr == "msglog: write error: no space left on device\n", "\(args): \(r)")
  }

  /// A write command whose result cannot be printed still committed: it
  /// exits 1, as any failed write to stdout does, and its hint names the
  /// event it made, which is in the log (a script retrying on exit 1 can
  /// see that it would make it twice).
  @Test func aWriteWhoseResultCannotBePrinted() throws {
    let s = Self.seeded()
    let head = s.run("log", "--all", "--json").lines.count
    let handle = try #require(FileHandle(forWritingAtPath: "/dev/full"))
    var r = s.start(["append", "unprinted"], stdout: handle).finish()
    let words = "msglog: write error: no space left on device\n"
    var made = "hint: the change was made (seq \(head + 1)); only the report was lost: "
    #expect(r.code == 1, "\(r)")
    #expect(r.stderr == words + made + "'msglog log --from \(head + 1)' shows it\n", "\(r)")
    #expect(s.run("list").stdout.hasSuffix("unprinted\n"))
    // Several made at once: all of them named.
    r = s.start(["append", "--lines"], stdin: Data("one\ntwo\nthree\n".utf8), stdout: handle).finish()
    made = "hint: the 3 changes were made (seqs \(head + 2)…\(head + 4)); only the report was lost: "
    #expect(r.code == 1, "\(r)")
    #expect(r.stderr == words + made + "'msglog log --from \(head + 2)' shows it\n", "\(r)")
    // Nothing made, nothing named: a move that changes nothing.
    r = s.start(["move", "0", "0", "--json"], stdout: handle).finish()
    #expect(r.code == 1 && r.stderr.hasSuffix(words) && !r.stderr.contains("hint:"), "\(r)")
  }

  /// `import`, `erase`, `trim` and `purge` name what they made when their
  /// report is lost, as the other writes do; a retry of an import would
  /// import its lines again. What made nothing (a dry run, an item erased
  /// already) is a plain write error.
  @Test func theOtherWritesWhoseReportCannotBePrinted() throws {
    let s = Self.seeded()
    let head = s.run("log", "--all", "--json").lines.count
    let handle = try #require(FileHandle(forWritingAtPath: "/dev/full"))
    let words = "msglog: write error: no space left on device\n"
    let lines = #"{"op":"append","text":"one"}"# + "\n" + #"{"op":"append","text":"two"}"# + "\n"
    var r = s.start(["import"], stdin: Data(lines.utf8), stdout: handle).finish()
    var made = "hint: the 2 events were imported (seqs \(head + 1)…\(head + 2)); only the report was lost: "
    #expect(r.code == 1 && r.stderr == words + made + "'msglog log --from \(head + 1)' shows them\n", "\(r)")
    #expect(s.run("list").lines.suffix(2).map { $0.split(separator: " ").last! } == ["one", "two"])
    r = s.start(["import", "--json"], stdin: Data(#"{"op":"append","text":"three"}"#.utf8), stdout: handle).finish()
    made = "hint: the event was imported (seq \(head + 3)); only the report was lost: "
    #expect(r.code == 1 && r.stderr == words + made + "'msglog log --from \(head + 3)' shows it\n", "\(r)")

    // The first item's id prefix, as `list` shows it.
    let id = String(try #require(s.run("list").lines.first?.split(separator: " ").dropFirst().first))
    r = s.start(["erase", id, "--purge"], stdout: handle).finish()
    made = "hint: the erase was made (seq \(head + 4)), and the purge after it; only the report was lost: "
    #expect(r.code == 1 && r.stderr == words + made + "'msglog log --from \(head + 4)' shows it\n", "\(r)")
    r = s.start(["erase", id, "--json"], stdout: handle).finish()
    #expect(r.code == 1 && !r.stderr.contains("hint:"), "\(r)")

    r = s.start(["trim", "--before", "10", "--dry-run"], stdout: handle).finish()
    #expect(r.code == 1 && r.stderr == words, "\(r)")
    r = s.start(["trim", "--before", "10"], stdout: handle).finish()
    #expect(
      r.code == 1
        && r.stderr == words + "hint: the trim was made (history now begins at seq 10); only the report was lost\n",
      "\(r)")
    #expect(s.run("trim", "--before", "10").stderr == "msglog: nothing to trim: history begins at seq 10\n")

    r = s.start(["purge"], stdout: handle).finish()
    #expect(r.code == 1 && r.stderr.hasPrefix(words + "hint: the purge was made ("), "\(r)")
    #expect(r.stderr.hasSuffix(" bytes scrubbed); only the report was lost\n"), "\(r)")
  }

  /// A replica's import makes pending changes, not seqs: its lost report
  /// names those and where they are listed.
  @Test func aReplicasImportWhoseReportCannotBePrinted() throws {
    let server = Self.seeded()
    let served = try ServedLog.running(server)
    defer { _ = served.stop() }
    let replica = Sandbox()
    #expect(replica.run("clone", served.url!).code == 0)
    #expect(replica.run("append", "first pending").code == 0)
    let handle = try #require(FileHandle(forWritingAtPath: "/dev/full"))
    let lines = #"{"op":"append","text":"one"}"# + "\n" + #"{"op":"append","text":"two"}"# + "\n"
    let r = replica.start(["import"], stdin: Data(lines.utf8), stdout: handle).finish()
    #expect(r.code == 1, "\(r)")
    #expect(
      r.stderr == "msglog: write error: no space left on device\nhint: the 2 events were imported "
        + "(pending changes 2…3); only the report was lost: 'msglog status -v' lists them\n", "\(r)")
    #expect(replica.run("status", "--json").stdout.contains(#""pending":3"#))
  }

  /// `msglog list --json | head -c 1`: a reader that has gone away ends the
  /// command quietly with exit 0 — not killed by SIGPIPE, no message.
  @Test(arguments: [["list", "--json"], ["export"], ["log", "--all"]])
  func aClosedPipeEndsQuietly(_ args: [String]) throws {
    let s = Self.seeded()
    let pipe = Pipe()
    try pipe.fileHandleForReading.close()  // nobody will ever read: every write is EPIPE
    let child = s.start(args, stdout: pipe.fileHandleForWriting)
    try pipe.fileHandleForWriting.close()
    let r = child.finish()
    #expect(child.process.terminationReason == .exit, "\(args): killed by signal \(child.process.terminationStatus)")
    #expect(r.code == 0 && r.stderr.isEmpty, "\(args): \(r)")
  }
}
