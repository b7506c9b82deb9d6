import Foundation
import MsglogTestSupport
import Testing

#if canImport(Glibc)
  import Glibc
#endif

/// A first write builds its database in a staging directory. Ctrl-C or
/// SIGTERM during a long one (a first import) removes it; what a killed
/// process left is swept by the next first write, unless its builder is
/// alive.
@Suite struct StagingCleanupTests {
  func entries(_ path: String) -> [String] {
    ((try? FileManager.default.contentsOfDirectory(atPath: path)) ?? []).sorted()
  }

  /// An import large enough to be interrupted while it writes (of `lines`
  /// lines of about 230 bytes each).
  func writeLargeImport(_ s: Sandbox, lines: Int = 200_000) throws -> String {
    let file = s.dir + "/large.jsonl"
    let padding = String(repeating: "x", count: 200)
    try (0..<lines).map { #"{"op":"append","text":"message \#($0) \#(padding)"}"# }.joined(separator: "\n")
      .write(toFile: file, atomically: false, encoding: .utf8)
    return file
  }

  /// Waits until `directory` (beside the database or inside it) holds a
  /// staging directory; false when the child ended first.
  func waitForStaging(in directories: [String], while child: Sandbox.Child) -> Bool {
    while child.process.isRunning {
      if directories.contains(where: { entries($0).contains { $0.contains("creating-") } }) { return true }
      usleep(2000)
    }
    return false
  }

  @Test(arguments: [SIGINT, SIGTERM], [false, true])
  func aSignalDuringAFirstImportLeavesNoStagingDirectory(_ signal: Int32, intoEmptyDirectory: Bool) throws {
    let s = Sandbox()
    let file = try writeLargeImport(s)
    if intoEmptyDirectory { #expect(mkdir(s.db, 0o755) == 0) }
    let child = s.start(["import", file])
    let started = waitForStaging(in: [s.dir, s.db], while: child)
    let r: Run
    if started {
      kill(child.process.processIdentifier, signal)
      r = child.finish()
    } else {
      r = child.finish()
    }
    try #require(started, "the import ended before it could be interrupted: \(r)")
    #expect(child.process.terminationReason == .uncaughtSignal && child.process.terminationStatus == signal, "\(r)")
    let left = (entries(s.dir) + entries(s.db)).filter { $0.contains("creating-") }
    #expect(left.isEmpty, "left behind: \(left)")
    if intoEmptyDirectory {
      #expect(entries(s.db).isEmpty, "\(entries(s.db))")
    } else {
      #expect(!FileManager.default.fileExists(atPath: s.db))
    }
  }

  /// kill -9 in the middle of a first import, after pieces of it were
  /// committed inside its staging directory (a first import commits as it
  /// goes there): no database at the path, so nobody saw part of it; the
  /// next first write sweeps what was left, and the import lands whole.
  @Test func aFirstImportKilledAfterItsFirstPiecesLeavesNoDatabase() throws {
    let s = Sandbox()
    let file = try writeLargeImport(s)
    let child = s.start(["import", file])
    var committed = false
    while child.process.isRunning, !committed {
      for name in entries(s.dir) where name.contains("creating-") {
        let size = (try? FileManager.default.attributesOfItem(atPath: s.dir + "/" + name + "/data.mdb")[.size]) as? Int
        // Past a few pieces (4 MiB put each): LMDB wrote them into the file.
        if (size ?? 0) > 24 << 20 { committed = true }
      }
      usleep(1000)
    }
    if committed { kill(child.process.processIdentifier, SIGKILL) }
    let r = child.finish()
    try #require(committed, "the import ended before a piece was committed: \(r)")
    #expect(child.process.terminationReason == .uncaughtSignal && child.process.terminationStatus == SIGKILL, "\(r)")
    #expect(!FileManager.default.fileExists(atPath: s.db), "a killed first import left a database")
    #expect(entries(s.dir).contains { $0.contains("creating-") }, "kill -9 cleans nothing up")
    let again = s.run(["import", file])
    #expect(again.code == 0, "\(again)")
    #expect(entries(s.dir).filter { $0.contains("creating-") }.isEmpty, "\(entries(s.dir))")
    let verify = s.run("verify")
    #expect(verify.code == 0 && verify.stdout.contains("200000 events"), "\(verify)")
  }

  /// A first import's commits in its staging directory are not synced
  /// one by one (`Environment.deferSyncing`): the data file is synced once,
  /// after the last byte written to it — LMDB's pages, its meta page and
  /// the scrub's zeros — and before the directory is put in place, so that
  /// a power cut can never leave a database at the path that lacks pages.
  /// Seen by strace, with each descriptor's file (`-y`).
  @Test func aFirstImportIsSyncedBeforeItIsPutInPlace() throws {
    let s = Sandbox()
    // About 8 MB of records: more than one piece, so that pieces commit before the end.
    let file = try writeLargeImport(s, lines: 30_000)
    let trace = s.dir + "/strace.txt"
    let calls = "trace=write,pwrite64,writev,pwritev,pwritev2,fdatasync,fsync,sync_file_range,rename,renameat,renameat2"
    let r = s.run(
      ["-f", "-y", "-e", calls, "-o", trace, Sandbox.binary, "import", file], runner: "/usr/bin/strace")
    #expect(r.code == 0 && r.stdout.hasPrefix("imported 30000 events"), "\(r)")
    let lines = ((try? String(contentsOfFile: trace, encoding: .utf8)) ?? "").split(separator: "\n")
    // The staging directory's data file, as `-y` names a descriptor: "5</…/db.creating-…/data.mdb>".
    func onStagedData(_ line: Substring) -> Bool { line.contains("creating-") && line.contains("/data.mdb>") }
    let writes = lines.indices.filter { i in
      onStagedData(lines[i]) && ["write(", "pwrite64(", "writev(", "pwritev"].contains { lines[i].contains($0) }
    }
    let syncs = lines.indices.filter {
      onStagedData(lines[$0]) && lines[$0].contains("fdatasync(") && lines[$0].hasSuffix("= 0")
    }
    // The one rename of the staging directory (its result may be on a
    // "resumed" line of its own, when another thread's call came between).
    let install = lines.firstIndex { $0.contains("rename") && $0.contains("creating-") }
    try #require(!writes.isEmpty && install != nil, "no write or no rename traced: \(lines.suffix(20))")
    #expect(
      syncs.contains { $0 > writes.last! && $0 < install! },
      "no sync of the data file between its last write and its installing: \(lines.suffix(12))")
    #expect(writes.last! < install!, "the data file was written after it was put in place")
    #expect(FileManager.default.fileExists(atPath: s.db + "/data.mdb"), "the database was not put in place")
    #expect(s.run("verify").stdout.hasPrefix("ok: 30000 events"))
  }

  /// A PID that no process has: one that ran and was reaped.
  func deadPID() -> pid_t { ChildProcess.run("/bin/true") }

  /// Plants a staging directory as a killed builder leaves one: LMDB's two files.
  func plant(_ path: String) {
    #expect(mkdir(path, 0o700) == 0, "\(path)")
    _ = FileManager.default.createFile(atPath: path + "/data.mdb", contents: Data(repeating: 0, count: 24_576))
    _ = FileManager.default.createFile(atPath: path + "/lock.mdb", contents: Data(repeating: 0, count: 8192))
  }

  @Test func theNextFirstWriteSweepsWhatDeadProcessesLeft() throws {
    let s = Sandbox()
    let dead = deadPID()
    let live = getpid()
    let stale = [
      s.db + ".creating-\(dead)-17", s.db + ".cloning-\(dead)-18",
    ]
    let kept = [s.db + ".creating-\(live)-19", s.dir + "/other.lmdb.creating-\(dead)-20"]
    for path in stale + kept { plant(path) }
    let r = s.run(["append", "first"])
    #expect(r.code == 0, "\(r)")
    for path in stale { #expect(!FileManager.default.fileExists(atPath: path), "\(path) was not swept") }
    for path in kept { #expect(FileManager.default.fileExists(atPath: path), "\(path) was swept") }
    #expect(s.run(["list"]).stdout.hasSuffix("first\n"))
  }

  /// A clone sweeps what killed clones left as a first write does. A clone
  /// killed with -9 leaves `DIR.cloning-PID-N` beside its directory, its
  /// replica being built in `.msglog-creating-PID-M` inside it; the sweep
  /// removed files only, so the next clone into DIR, succeeding, left both
  /// there for good.
  @Test func aCloneSweepsWhatKilledClonesLeft() throws {
    let server = Sandbox()
    server.append("hello")
    let served = try ServedLog.running(server)
    defer { _ = served.stop() }
    let s = Sandbox()
    let dead = deadPID()
    let stale = [s.db + ".cloning-\(dead)-7", s.db + ".creating-\(deadPID())-8"]
    let kept = s.db + ".cloning-\(getpid())-9"
    for path in stale + [kept] { plant(path) }
    plant(stale[0] + "/.msglog-creating-\(dead)-10")
    let r = s.run(["clone", try #require(served.url)])
    #expect(r.code == 0, "\(r)")
    for path in stale { #expect(!FileManager.default.fileExists(atPath: path), "\(path) was not swept") }
    #expect(FileManager.default.fileExists(atPath: kept), "a live builder's was swept")
    #expect(s.run(["list"]).stdout.hasSuffix("hello\n"))
  }

  /// A clone killed after its data file was put in place leaves its
  /// staging directory (with LMDB's lock file) inside the replica: the
  /// replica's next sync sweeps it; a live builder's stays.
  @Test func aSyncSweepsWhatAKilledCloneLeftInsideItsReplica() throws {
    let server = Sandbox()
    server.append("hello")
    let served = try ServedLog.running(server)
    defer { _ = served.stop() }
    let s = Sandbox()
    #expect(s.run(["clone", try #require(served.url)]).code == 0)
    let stale = s.db + "/.msglog-cloning-\(deadPID())-3"
    let kept = s.db + "/.msglog-cloning-\(getpid())-4"
    for path in [stale, kept] { plant(path) }
    let r = s.run(["sync"])
    #expect(r.code == 0, "\(r)")
    #expect(!FileManager.default.fileExists(atPath: stale), "\(stale) was not swept")
    #expect(FileManager.default.fileExists(atPath: kept), "a live builder's was swept")
  }

  /// Inside an empty directory too; a directory holding only staging
  /// directories is still empty.
  @Test func sweepsInsideAnEmptyDirectory() throws {
    let s = Sandbox()
    #expect(mkdir(s.db, 0o755) == 0)
    let dead = deadPID()
    plant(s.db + "/.msglog-creating-\(dead)-1")
    plant(s.db + "/.msglog-creating-\(getpid())-2")
    let list = s.run(["list"])
    #expect(list.code == 1 && list.stderr.contains("(the directory is empty)"), "\(list)")
    #expect(s.run(["append", "first"]).code == 0)
    #expect(entries(s.db).sorted() == [".msglog-creating-\(getpid())-2", "data.mdb"], "\(entries(s.db))")
  }

  /// A builder in another PID namespace (a container sharing the volume)
  /// has a number that is dead here, but holds LMDB's lock on its lock
  /// file: its staging directory is left alone.
  @Test func aLockedStagingDirectoryIsNotSwept() throws {
    let s = Sandbox()
    let dead = deadPID()
    let locked = s.db + ".creating-\(dead)-5"
    plant(locked)
    let holder = s.start(
      [
        "-c",
        "import fcntl, sys, time\nf = open(sys.argv[1], 'r+b')\nfcntl.lockf(f, fcntl.LOCK_SH, 1, 0)\n"
          + "print('locked', flush=True)\ntime.sleep(30)",
        locked + "/lock.mdb",
      ], runner: "/usr/bin/python3")
    defer {
      kill(holder.process.processIdentifier, SIGKILL)
      _ = holder.finish()
    }
    while (try? String(contentsOfFile: holder.outPath, encoding: .utf8))?.contains("locked") != true {
      try #require(holder.process.isRunning, "the lock holder did not start")
      usleep(5000)
    }
    #expect(s.run(["append", "first"]).code == 0)
    #expect(FileManager.default.fileExists(atPath: locked + "/lock.mdb"), "a locked staging directory was swept")
  }
}

extension ChildProcess {
  /// Runs `executable` to its end; returns the PID it had.
  static func run(_ executable: String) -> pid_t {
    var pid: pid_t = 0
    let argv: [UnsafeMutablePointer<CChar>?] = [strdup(executable), nil]
    defer { free(argv[0]) }
    precondition(posix_spawn(&pid, executable, nil, nil, argv, environ) == 0)
    var status: Int32 = 0
    while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
    return pid
  }
}
