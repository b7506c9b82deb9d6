import Foundation
import Msglog
import MsglogTestSupport
import Testing

#if canImport(Glibc)
  import Glibc
#endif

/// `msglog backup DEST [--compact]`: a consistent copy of a live LMDB
/// database while writers in other processes go on — a complete database
/// equal to the source as of the seq it prints — made whole at DEST or not
/// at all; refused on PostgreSQL with the tools that copy it named.
@Suite struct BackupTests {
  func entries(_ path: String) -> [String] {
    ((try? FileManager.default.contentsOfDirectory(atPath: path)) ?? []).sorted()
  }

  /// `backed up N events (seq S) to DEST, X MiB`, read back.
  func parse(_ r: Run, dest: String) -> (events: Int, seq: Int)? {
    let pattern = #"^backed up (\d+) events? \(seq (\d+)\) to (.*), \d+\.\d MiB\n$"#
    guard let match = r.stdout.firstMatch(of: try! Regex(pattern)), match.count == 4,
      let events = match[1].substring.flatMap({ Int($0) }), let seq = match[2].substring.flatMap({ Int($0) }),
      match[3].substring.map(String.init) == dest
    else { return nil }
    return (events, seq)
  }

  /// Writers in other processes append all through the copy; the copy
  /// verifies, and its export is the source's export up to the seq printed.
  @Test func aCopyWhileWritersGoOn() throws {
    let s = Sandbox()
    let seed = (0..<20_000).map { "seed \($0) " + String(repeating: "s", count: 100) }.joined(separator: "\n")
    #expect(s.run(["append", "--lines"], stdin: Data(seed.utf8)).code == 0)
    let stop = s.dir + "/stop"
    let writers = (0..<3).map { w in
      s.start(
        [
          "-c",
          "i=0; while [ ! -e \(stop) ]; do i=$((i+1)); \(Sandbox.binary) append \"writer \(w) $i\" >/dev/null || exit 1; done",
        ],
        runner: "/bin/sh")
    }
    defer {
      _ = FileManager.default.createFile(atPath: stop, contents: nil)
      for writer in writers { _ = writer.finish() }
    }
    func head() -> Int {
      let r = s.run(["streams", "--json"])
      let document = try? JSONSerialization.jsonObject(with: Data(r.stdout.utf8)) as? [String: Any]
      return (document?["streams"] as? [[String: Any]])?.compactMap { $0["seq"] as? Int }.max() ?? 0
    }
    while head() <= 20_000 { usleep(10_000) }
    let dest = s.dir + "/copy.lmdb"
    let r = s.run(["backup", dest])
    #expect(r.code == 0 && r.stderr.isEmpty, "\(r)")
    let printed = try #require(parse(r, dest: dest), "\(r)")
    #expect(printed.seq > 20_000 && printed.events == printed.seq, "\(r)")
    // The writers went on after the copy's snapshot.
    while head() <= printed.seq { usleep(10_000) }
    _ = FileManager.default.createFile(atPath: stop, contents: nil)
    for writer in writers { #expect(writer.finish().code == 0) }
    let verify = s.run(["--db", dest, "verify"])
    #expect(verify.code == 0 && verify.stdout.hasPrefix("ok: \(printed.seq) events"), "\(verify)")
    let copied = s.run(["--db", dest, "export"]).lines
    let source = s.export().split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
    #expect(copied.count == printed.seq && copied == Array(source.prefix(printed.seq)))
    #expect(entries(s.dir).filter { $0.contains(".backup-") }.isEmpty)
  }

  @Test func jsonAndCompact() throws {
    let s = Sandbox()
    // Many small commits leave free pages behind, which --compact drops.
    for i in 0..<60 { s.append("message \(i) " + String(repeating: "m", count: 2000)) }
    _ = s.run(["move", "0", "59"])
    let plain = s.dir + "/plain.lmdb"
    let compact = s.dir + "/compact.lmdb"
    var r = s.run(["backup", plain, "--json"])
    #expect(r.code == 0, "\(r)")
    let document = try #require(try JSONSerialization.jsonObject(with: Data(r.stdout.utf8)) as? [String: Any])
    let size = try #require(try FileManager.default.attributesOfItem(atPath: plain + "/data.mdb")[.size] as? Int)
    #expect(document["events"] as? Int == 61 && document["seq"] as? Int == 61, "\(document)")
    #expect(document["path"] as? String == plain && document["bytes"] as? Int == size, "\(document)")
    #expect(document["compact"] as? Bool == false && document.count == 5, "\(document)")
    r = s.run(["backup", "--compact", compact])
    #expect(r.code == 0 && parse(r, dest: compact)?.seq == 61, "\(r)")
    let compactSize = try #require(
      try FileManager.default.attributesOfItem(atPath: compact + "/data.mdb")[.size] as? Int)
    #expect(compactSize < size, "compact \(compactSize) bytes, plain \(size)")
    for copy in [plain, compact] {
      // The data file alone: a reader's lock file is made by whoever opens it.
      #expect(entries(copy) == ["data.mdb"], "\(entries(copy))")
      #expect(s.run(["--db", copy, "verify"]).code == 0)
      #expect(s.run(["--db", copy, "export"]).stdout == s.export())
    }
  }

  /// DEST must not exist: a directory (even empty), a file, a dangling
  /// link are refused and left as they were; so is a missing parent.
  @Test func anExistingDestinationIsRefused() throws {
    let s = Sandbox()
    s.append("x")
    let empty = s.dir + "/empty"
    #expect(mkdir(empty, 0o755) == 0)
    let file = s.dir + "/file"
    _ = FileManager.default.createFile(atPath: file, contents: Data("keep".utf8))
    let link = s.dir + "/link"
    #expect(symlink(s.dir + "/nowhere", link) == 0)
    let before = s.contents()
    for dest in [empty, file, link, s.db] {
      let r = s.run(["backup", dest])
      #expect(r.code == 1 && r.stdout.isEmpty, "\(r)")
      #expect(r.stderr.hasPrefix("msglog: cannot back up to \(dest): it exists already"), "\(r)")
    }
    #expect(entries(empty).isEmpty && FileManager.default.contents(atPath: file) == Data("keep".utf8))
    #expect(s.contents() == before)
    let r = s.run(["backup", s.dir + "/missing/copy"])
    // Said as the backup's (it said "cannot create the database").
    #expect(
      r.code == 1
        && r.stderr.hasPrefix("msglog: cannot back up to \(s.dir)/missing/copy: its parent directory does not exist"),
      "\(r)")
    #expect(entries(s.dir).filter { $0.contains(".backup-") }.isEmpty, "\(entries(s.dir))")
    let none = Sandbox()
    let missing = none.run(["backup", none.dir + "/copy"])
    #expect(missing.code == 1 && missing.stderr.hasPrefix("msglog: no database at"), "\(missing)")
    #expect(entries(none.dir).filter { $0.contains("copy") }.isEmpty)
  }

  /// A data file cut short past what its meta pages and roots show (the
  /// checks at opening pass): LMDB copies the file as long as it is, and a
  /// crash-safety tester's backup of one said "backed up", exit 0, a copy
  /// verify refuses. Now it is refused before anything is made, exit 1,
  /// saying so, leaving nothing at DEST or beside it. (Which cut loses a page in use depends on where
  /// LMDB put them: the first that verify finds cut short is taken.)
  @Test func aBackupOfAFileCutShortFails() throws {
    let (_, whole) = try CutDataFiles.endingInPagesInUse()
    var found = false
    for pages in 1...8 where !found {
      let cut = try CutDataFiles.cut(whole, by: pages * 4096)
      guard cut.run("verify").stdout.hasPrefix(CutDataFiles.said) else { continue }
      found = true
      let destination = cut.dir + "/copy.lmdb"
      let backup = cut.run("backup", destination)
      #expect(backup.code == 1 && backup.stderr.contains(CutDataFiles.said), "\(pages) pages: \(backup)")
      let beside = try FileManager.default.contentsOfDirectory(atPath: cut.dir).filter { $0.hasPrefix("copy.lmdb") }
      #expect(beside.isEmpty, "\(pages) pages: \(beside) left")
    }
    #expect(found, "no cut of up to 8 pages was found cut short")
  }

  /// kill -9 in the middle of a large copy leaves nothing at DEST; the
  /// next backup sweeps what it left beside it.
  @Test func aKilledBackupLeavesNothingAtDest() throws {
    let s = Sandbox()
    // About 120 MB: a copy that takes a while.
    let text = String(repeating: "k", count: 1_000_000)
    let lines = (0..<120).map { #"{"op":"append","text":"\#($0) \#(text)"}"# }.joined(separator: "\n")
    #expect(s.run(["import"], stdin: Data(lines.utf8)).code == 0)
    let dest = s.dir + "/copy.lmdb"
    let child = s.start(["backup", dest])
    var staging: String? = nil
    while child.process.isRunning, staging == nil {
      staging = entries(s.dir).first { $0.hasPrefix("copy.lmdb.backup-") }
      if staging == nil { usleep(500) }
    }
    kill(child.process.processIdentifier, SIGKILL)
    let r = child.finish()
    try #require(staging != nil, "the backup ended before it could be killed: \(r)")
    #expect(child.process.terminationReason == .uncaughtSignal && child.process.terminationStatus == SIGKILL, "\(r)")
    #expect(!FileManager.default.fileExists(atPath: dest), "a killed backup left \(entries(dest)) at DEST")
    let again = s.run(["backup", dest])
    #expect(again.code == 0, "\(again)")
    #expect(entries(s.dir).filter { $0.contains(".backup-") }.isEmpty, "\(entries(s.dir))")
    #expect(s.run(["--db", dest, "verify"]).stdout.hasPrefix("ok: 120 events"))
  }

  /// A backup made after an erase holds no erased text, though the source
  /// still does until its own purge: LMDB's copy takes the free pages (or,
  /// compacting, the pages' unused middles) as they are, and the copy is
  /// purged before it is DEST. (A plain backup held the text.)
  @Test func aBackupAfterAnEraseHoldsNoErasedText() throws {
    let s = Sandbox()
    let sentinel = "SENTINEL-" + UUID().uuidString
    #expect(
      s.run(["append", "--lines"], stdin: Data((0..<200).map { "before \($0)" }.joined(separator: "\n").utf8)).code == 0
    )
    let secret = s.append(sentinel)
    #expect(s.run("edit", secret, sentinel + " edited " + String(repeating: "x", count: 5000)).code == 0)
    #expect(
      s.run(["append", "--lines"], stdin: Data((0..<200).map { "after \($0)" }.joined(separator: "\n").utf8)).code == 0)
    #expect(s.run("erase", secret).code == 0)
    let source = try Data(contentsOf: URL(fileURLWithPath: s.db + "/data.mdb"))
    #expect(source.range(of: Data(sentinel.utf8)) != nil, "the erase left no old page: the test proves nothing")
    for (n, compact) in [[], ["--compact"]].enumerated() {
      let dest = s.dir + "/copy\(n).lmdb"
      let r = s.run(["backup", dest] + compact)
      #expect(r.code == 0, "\(r)")
      #expect(entries(dest) == ["data.mdb"])
      let copy = try Data(contentsOf: URL(fileURLWithPath: dest + "/data.mdb"))
      #expect(copy.range(of: Data(sentinel.utf8)) == nil, "\(compact): the backup holds the erased text")
      #expect(s.run(["--db", dest, "export"]).stdout == s.export())
      #expect(s.run(["--db", dest, "verify"]).code == 0)
    }
  }

  /// A database read-only to the user is read without a reader slot; the
  /// copy is checked against commits made meanwhile, and is whole.
  @Test func aDatabaseReadOnlyToTheUserIsBackedUp() throws {
    try #require(getuid() == 0, "this test switches to user nobody and needs root")
    let s = Sandbox()
    #expect(
      s.run(["append", "--lines"], stdin: Data((0..<500).map { "line \($0)" }.joined(separator: "\n").utf8)).code == 0)
    try makeReadableByOthers(s)
    let out = s.dir + "/out"
    #expect(mkdir(out, 0o755) == 0 && chown(out, 65534, 65534) == 0)
    let r = s.run(["backup", out + "/copy.lmdb"], asNobody: true)
    #expect(r.code == 0 && parse(r, dest: out + "/copy.lmdb")?.seq == 500, "\(r)")
    #expect(s.run(["--db", out + "/copy.lmdb", "export"]).stdout == s.export())
  }

  @Test func postgreSQLIsRefusedWithItsOwnToolsNamed() throws {
    let s = Sandbox(.postgres)
    s.append("x")
    let dest = s.dir + "/copy.lmdb"
    let r = s.run(["backup", dest])
    #expect(r.code == 1 && r.stdout.isEmpty, "\(r)")
    #expect(r.stderr.hasPrefix("msglog: \(s.shown) is not an LMDB directory"), "\(r)")
    #expect(r.stderr.contains("pg_dump") && r.stderr.contains("pg_basebackup") && r.stderr.contains("export"), "\(r)")
    #expect(!FileManager.default.fileExists(atPath: dest))
  }

  /// The library's door says why, as a case a program can switch on.
  @Test func aLogInMemoryHasNoBackup() {
    #expect(throws: MsglogError.backupNotSupported(location: "(memory)")) {
      try EventLog.inMemory().backup(to: NSTemporaryDirectory() + "msglog-never-made")
    }
  }
}
