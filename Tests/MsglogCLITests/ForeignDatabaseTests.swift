import Foundation
import MsglogTestSupport
import Testing

#if canImport(Glibc)
  import Glibc
#endif

/// Databases that are not msglog's, or that msglog may only read: another
/// program's LMDB environment is never written into; a database read-only
/// to the user serves every read and refuses writes clearly; an unreadable
/// directory, an empty, truncated or non-LMDB data.mdb get a clear message
/// and nothing is created. No LMDB function name or staging path reaches the user.
@Suite struct ForeignDatabaseTests {
  /// Runs a Python snippet with Debian's lmdb module against `db`.
  func lmdbScript(_ code: String, _ db: String) {
    let r = python(["-c", "import lmdb, sys\nenv = lmdb.open(sys.argv[1], max_dbs=8)\n" + code, db])
    #expect(r.code == 0, "\(r)")
  }

  func bytes(_ path: String) -> Data? { FileManager.default.contents(atPath: path) }

  /// A path given with --db (or MSGLOG_DB) holding a terminal's escape is
  /// said escaped, as every other part of a message a user gave is: it
  /// cleared the screen of whoever read the error.
  @Test func aPathHoldingAnEscapeIsSaidEscaped() throws {
    let s = Sandbox()
    let path = s.dir + "/\u{1B}[2Jdb"
    for run in [s.run(["--db", path, "list"]), s.run(["list"], environment: ["MSGLOG_DB": path])] {
      #expect(run.code == 1, "\(run)")
      #expect(run.stderr.hasPrefix("msglog: no database at \(s.dir)/\\x1b[2Jdb\n"), "\(run)")
      #expect(!run.stderr.contains("\u{1B}"), "\(run)")
    }
    #expect(!FileManager.default.fileExists(atPath: path))
  }

  @Test func anotherProgramsEnvironmentIsNeverWritten() throws {
    let s = Sandbox()
    let foreign = s.dir + "/foreign"
    try FileManager.default.createDirectory(atPath: foreign, withIntermediateDirectories: false)
    lmdbScript(
      """
      with env.begin(write=True) as t:
          t.put(b"not-a-seq", b"junk", db=env.open_db(b"events", txn=t))
          t.put(b"settings", b"{}", db=env.open_db(b"settings", txn=t))
      """, foreign)
    let before = try #require(bytes(foreign + "/data.mdb"))
    for args in [["append", "hi"], ["insert", "0", "hi"], ["import"], ["verify", "--repair"]] {
      let r = s.run(["--db", foreign] + args, stdin: Data(#"{"op":"append","text":"x"}"#.utf8))
      #expect(r.code == 1, "\(args): \(r)")
      #expect(r.stderr.hasPrefix("msglog: \(foreign) is not a msglog database"), "\(args): \(r)")
      #expect(bytes(foreign + "/data.mdb") == before, "\(args) wrote into another program's database")
    }
    for args in [["list"], ["verify"], ["log"], ["export"], ["streams"]] {
      let r = s.run(["--db", foreign] + args)
      #expect(r.code == 1 && r.stderr.hasPrefix("msglog: \(foreign) is not a msglog database"), "\(args): \(r)")
    }
    // An import with no lines, which writes nothing, says so too: it said
    // "imported 0 events" of another program's database, a file, a folder.
    let file = s.dir + "/a-file"
    let folder = s.dir + "/a-folder"
    FileManager.default.createFile(atPath: file, contents: Data("hi\n".utf8))
    try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: false)
    FileManager.default.createFile(atPath: folder + "/readme.txt", contents: Data("a\n".utf8))
    for path in [foreign, file, folder] {
      let r = s.run(["--db", path, "import"], stdin: Data())
      #expect(r.code == 1 && r.stdout.isEmpty, "\(path): \(r)")
      #expect(r.stderr.hasPrefix("msglog: \(path) is not a msglog database"), "\(path): \(r)")
    }
    #expect(bytes(foreign + "/data.mdb") == before, "an empty import wrote into another program's database")
    let fresh = s.run(["--db", s.dir + "/not-yet", "import"], stdin: Data())
    #expect(fresh.code == 0 && fresh.stdout == "imported 0 events; the head is seq 0\n", "\(fresh)")
    #expect(!FileManager.default.fileExists(atPath: s.dir + "/not-yet"), "an empty import made a database")
    // Keys in the unnamed database only: still another program's.
    let plain = s.dir + "/plain"
    try FileManager.default.createDirectory(atPath: plain, withIntermediateDirectories: false)
    lmdbScript("with env.begin(write=True) as t:\n    t.put(b'key', b'value')", plain)
    let r = s.run(["--db", plain, "append", "hi"])
    #expect(r.code == 1 && r.stderr.contains("another program's LMDB environment"), "\(r)")
  }

  /// A junk record under a key that is not a seq, added to a msglog log.
  @Test func aJunkKeyInTheEventsTableIsReportedNotTrapped() throws {
    let s = Sandbox()
    s.append("one")
    lmdbScript(
      "with env.begin(write=True) as t:\n    t.put(b'\\xffjunk', b'x', db=env.open_db(b'events', txn=t))", s.db)
    for args in [["verify"], ["list"], ["export"], ["append", "two"]] {
      let r = s.run(args)
      #expect(r.code == 1, "\(args): \(r)")
      #expect(
        r.stderr.contains("the events table holds a key of 5 bytes") || r.stdout.contains("key of 5 bytes"),
        "\(args): \(r)")
    }
  }

  /// Files 0644 owned by someone else: reads work (without a reader slot),
  /// writes say read-only, and nothing changes.
  @Test func aDatabaseOwnedBySomeoneElseIsReadOnly() throws {
    try #require(getuid() == 0, "this test switches to user nobody and needs root")
    let s = Sandbox()
    for i in 0..<50 { s.append("message \(i)", sender: i % 2 == 0 ? "ann" : nil) }
    _ = s.run(["append", "--stream", "other", "elsewhere"])
    try makeReadableByOthers(s)
    let reads = [
      ["list"], ["list", "--json"], ["replay"], ["replay", "--at", "20"], ["log", "--all"], ["streams"], ["export"],
      ["verify"], ["list", "--stream", "other"],
    ]
    let mine = reads.map { s.run($0) }
    let data = bytes(s.db + "/data.mdb")
    let lock = bytes(s.db + "/lock.mdb")
    for (args, mine) in zip(reads, mine) {
      let theirs = s.run(args, asNobody: true)
      #expect(theirs.code == 0 && theirs.stderr.isEmpty, "\(args): \(theirs)")
      #expect(theirs.stdout == mine.stdout, "\(args)")
    }
    // `purge` among them: it stopped the process (a precondition) before it said why.
    for args in [
      ["append", "x"], ["move", "0", "1"], ["import"], ["verify", "--repair"], ["purge"], ["--json", "purge"],
    ] {
      let r = s.run(args, stdin: Data(#"{"op":"append","text":"x"}"#.utf8), asNobody: true)
      #expect(r.code == 1, "\(args): \(r)")
      #expect(
        r.stderr.hasPrefix("msglog: cannot write to \(s.db): it is read-only (permission denied)"), "\(args): \(r)")
    }
    #expect(bytes(s.db + "/data.mdb") == data && bytes(s.db + "/lock.mdb") == lock)
  }

  /// A copy of data.mdb alone, in a directory the reader may not write: no
  /// lock file can be made, and reads still work.
  @Test func aBackupCopyWithoutALockFileIsReadable() throws {
    try #require(getuid() == 0, "this test switches to user nobody and needs root")
    let s = Sandbox()
    s.append("kept in the backup")
    let backup = s.dir + "/backup.lmdb"
    try FileManager.default.createDirectory(atPath: backup, withIntermediateDirectories: false)
    try FileManager.default.copyItem(atPath: s.db + "/data.mdb", toPath: backup + "/data.mdb")
    try makeReadableByOthers(s, db: backup)
    let r = s.run(["--db", backup, "list"], asNobody: true)
    #expect(r.code == 0 && r.stdout.hasSuffix("kept in the backup\n"), "\(r)")
    #expect(!FileManager.default.fileExists(atPath: backup + "/lock.mdb"))
  }

  /// A reader without a reader slot never prints a torn read: each output is
  /// a consistent snapshot of the log, or a refusal saying it changed.
  @Test func locklessReadsNeverTear() throws {
    try #require(getuid() == 0, "this test switches to user nobody and needs root")
    let s = Sandbox()
    let lines = (0..<3000).map { "seed \($0) " + String(repeating: "x", count: 80) }.joined(separator: "\n")
    #expect(s.run(["append", "--lines"], stdin: Data(lines.utf8)).code == 0)
    try makeReadableByOthers(s)
    let writer = s.start(["append", "--lines"], stdin: Data((0..<1).map { "w\($0)" }.joined().utf8))
    _ = writer.finish()
    try makeReadableByOthers(s)
    var outputs: [Run] = []
    let group = DispatchGroup()
    DispatchQueue.global().async(group: group) {
      for i in 0..<40 { _ = s.run(["append", "during \(i)"]) }
    }
    for _ in 0..<15 { outputs.append(s.run(["export"], asNobody: true)) }
    group.wait()
    let final = s.export().split(separator: "\n")
    var refused = 0
    for r in outputs {
      if r.code == 0 {
        let got = r.stdout.split(separator: "\n")
        #expect(Array(final.prefix(got.count)) == got, "a lockless read printed a log that never existed")
      } else {
        refused += 1
        #expect(r.code == 1 && r.stderr.hasPrefix("msglog: the database changed while it was read"), "\(r)")
      }
    }
    print("lockless reads: \(outputs.count) exports during 40 commits, \(refused) refused after retries")
  }

  /// A read-only file system: reads work, writes say so.
  @Test func aReadOnlyMount() throws {
    try #require(getuid() == 0, "this test bind-mounts a directory read-only and needs root")
    let s = Sandbox()
    s.append("on a read-only disk")
    let mountPoint = s.dir + "/ro"
    try FileManager.default.createDirectory(atPath: mountPoint, withIntermediateDirectories: false)
    #expect(shell("mount --bind \(s.db) \(mountPoint) && mount -o remount,bind,ro \(mountPoint)") == 0)
    defer { unmount(mountPoint) }
    var r = s.run(["--db", mountPoint, "list"])
    #expect(r.code == 0 && r.stdout.hasSuffix("on a read-only disk\n"), "\(r)")
    r = s.run(["--db", mountPoint, "append", "x"])
    #expect(
      r.code == 1
        && r.stderr.hasPrefix("msglog: cannot write to \(mountPoint): it is read-only (read-only file system)"), "\(r)")
  }

  @Test func anUnreadableDirectoryIsReportedAsUnreadable() throws {
    try #require(getuid() == 0, "this test switches to user nobody and needs root")
    let s = Sandbox()
    s.append("private")
    #expect(chmod(s.dir, 0o755) == 0)
    for args in [["list"], ["append", "x"]] {
      let r = s.run(args, asNobody: true)
      #expect(r.code == 1 && r.stderr == "msglog: cannot read \(s.db): permission denied\n", "\(args): \(r)")
    }
  }

  @Test(arguments: ["empty", "truncated", "garbage", "half"])
  func aBrokenDataFileGetsAClearMessageAndNothingIsCreated(_ kind: String) throws {
    let s = Sandbox()
    for i in 0..<400 { _ = i }
    let lines = (0..<2000).map { "message \($0)" }.joined(separator: "\n")
    #expect(s.run(["append", "--lines"], stdin: Data(lines.utf8)).code == 0)
    let whole = try #require(bytes(s.db + "/data.mdb"))
    try FileManager.default.removeItem(atPath: s.db)
    try FileManager.default.createDirectory(atPath: s.db, withIntermediateDirectories: false)
    let content: Data
    let message: String
    switch kind {
    case "empty": (content, message) = (Data(), "its data.mdb is empty")
    case "truncated": (content, message) = (whole.prefix(1000), "its data.mdb is truncated (1000 bytes)")
    case "garbage": (content, message) = (Data(repeating: 7, count: 8192), "its data.mdb is not an LMDB file")
    default:
      (content, message) = (
        whole.prefix(whole.count / 2), "its data.mdb is truncated (\(whole.count / 2) bytes; its root page"
      )
    }
    _ = FileManager.default.createFile(atPath: s.db + "/data.mdb", contents: content)
    for args in [["list"], ["verify"], ["append", "x"], ["log"]] {
      let r = s.run(args)
      #expect(r.code == 1, "\(kind) \(args): \(r)")
      #expect(r.stderr.hasPrefix("msglog: \(s.db) is not a msglog database (\(message)"), "\(kind) \(args): \(r)")
      #expect(
        try FileManager.default.contentsOfDirectory(atPath: s.db) == ["data.mdb"], "\(kind) \(args) created files")
      #expect(bytes(s.db + "/data.mdb") == content)
    }
  }

  /// Error text is for users: no LMDB function names, no staging directories.
  @Test func noInternalNamesInMessages() throws {
    let s = Sandbox()
    let blocked = s.dir + "/blocked"
    _ = FileManager.default.createFile(atPath: blocked, contents: Data("a file".utf8))
    for args in [["--db", blocked + "/db", "append", "x"], ["--db", s.dir + "/missing/db", "append", "x"]] {
      let r = s.run(args)
      #expect(r.code == 1, "\(r)")
      #expect(!r.stderr.contains("mdb_") && !r.stderr.contains(".creating-"), "\(r)")
    }
  }
}
