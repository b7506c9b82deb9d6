import Foundation
import MsglogTestSupport
import Testing

#if canImport(Glibc)
  import Glibc
#endif

/// Another local user who may read a database's directory, or write in it
/// (a sticky shared one), must not be able to stall its owner's commands:
/// holding the `flock` msglog's processes take on the directory while they
/// open the database had every command wait for ever, silently; a
/// `lock.mdb` she made before the owner's next opening was used, and with
/// it she held the writers' mutex (RELIABILITY.md).
@Suite struct AnotherUsersLockTests {
  /// Runs as user `nobody`, by `setpriv`.
  static let nobody = ["--reuid=65534", "--regid=65534", "--clear-groups"]

  /// A Python program (run by `setpriv` with `user`'s options, or as this
  /// process's user for nil) that says "held" once it holds its lock, and
  /// lets go when its standard input closes (or it is killed).
  final class Holder {
    let process = Process()
    let input = Pipe()

    init(_ script: String, _ arguments: [String], as user: [String]? = AnotherUsersLockTests.nobody) throws {
      let python = ["/usr/bin/python3", "-c", script] + arguments
      process.executableURL = URL(fileURLWithPath: user == nil ? python[0] : "/usr/bin/setpriv")
      process.arguments = user.map { $0 + ["--"] + python } ?? Array(python.dropFirst())
      let output = Pipe()
      process.standardInput = input
      process.standardOutput = output
      process.standardError = FileHandle.nullDevice
      try process.run()
      try #require(readsUntil("held", from: output), "the lock was not taken")
    }

    func release() {
      try? input.fileHandleForWriting.close()
      process.waitUntilExit()
    }

    deinit { release() }
  }

  /// A database made in a shared, sticky directory anyone may write (as
  /// /tmp), holding "first": its data file only, as a first write leaves it.
  static func stickySharedDatabase(_ s: Sandbox) -> String {
    let shared = s.dir + "/shared"
    #expect(chmod(s.dir, 0o711) == 0)
    #expect(mkdir(shared, 0o777) == 0 && chmod(shared, 0o1777) == 0)
    #expect(s.run(["--db", shared, "append", "first"]).code == 0)
    return shared
  }

  static let holdDirectory = """
    import fcntl, os, sys
    fd = os.open(sys.argv[1], os.O_RDONLY | os.O_DIRECTORY)
    fcntl.flock(fd, fcntl.LOCK_EX)
    print("held", flush=True)
    sys.stdin.read()
    """

  @Test func aDirectoryLockHeldByAnotherUserStallsNoCommandForEver() throws {
    try #require(getuid() == 0, "this test runs a process as user nobody and needs root")
    let s = Sandbox()
    s.append("first")
    // Readable by others, as `mkdir -m 755` or a group-shared directory makes it.
    #expect(chmod(s.dir, 0o711) == 0 && chmod(s.db, 0o755) == 0)
    let before = s.export()
    let holder = try Holder(Self.holdDirectory, [s.db])
    // A reader reads without the lock file after its patience (as where it may not write the lock file).
    let started = Date()
    let list = s.run(["list"])
    #expect(list.code == 0 && list.stdout.hasSuffix(" first\n"), "\(list)")
    #expect(Date().timeIntervalSince(started) >= 4.5, "list gave up before its patience")
    for args in [["append", "second"], ["erase", "--sender", "nobody"]] {
      let started = Date()
      let r = s.run(args)
      #expect(r.code == 1, "\(args): \(r)")
      #expect(
        r.stderr.hasPrefix(
          "msglog: cannot read \(s.db): another user's process (\(holder.process.processIdentifier)) has held the lock "
            + "on its directory for 5 s, "),
        "\(args): \(r)")
      #expect(Date().timeIntervalSince(started) >= 4.5, "\(args) gave up before its patience")
    }
    // Let go while a command waits: it goes on.
    let waiting = s.start(["append", "third"])
    usleep(500_000)
    #expect(waiting.process.isRunning, "the command did not wait")
    holder.release()
    let r = waiting.finish(endingAfter: 30)
    #expect(r.code == 0, "\(r)")
    let after = s.export()
    #expect(after.hasPrefix(before) && after.split(separator: "\n").count == 2, "\(after)")
  }

  /// A database readable by others (made in a `mkdir -m 755` directory):
  /// its lock file is not. From a read-only descriptor another user took a
  /// byte-range lock where LMDB takes a reader's, and every command failed.
  @Test func aLockFileIsReadOnlyByItsWriters() throws {
    try #require(getuid() == 0, "this test runs a process as user nobody and needs root")
    let s = Sandbox()
    let readable = s.dir + "/readable"
    #expect(chmod(s.dir, 0o711) == 0 && mkdir(readable, 0o755) == 0 && chmod(readable, 0o755) == 0)
    #expect(s.run(["--db", readable, "append", "first"]).code == 0)
    #expect(s.run(["--db", readable, "list"]).code == 0)
    var info = stat()
    #expect(
      lstat(readable + "/lock.mdb", &info) == 0 && info.st_mode & 0o777 == 0o600,
      "lock.mdb is \(String(info.st_mode & 0o777, radix: 8))")
    #expect(lstat(readable + "/data.mdb", &info) == 0 && info.st_mode & 0o777 == 0o644)
    // She reads the database still (without the lock file), and cannot take a lock in it.
    let theirs = s.run(["--db", readable, "list"], asNobody: true)
    #expect(theirs.code == 0 && theirs.stdout.hasSuffix(" first\n"), "\(theirs)")
    let lockf = runProgram(
      "/usr/bin/setpriv",
      Self.nobody + [
        "--", "/usr/bin/python3", "-c", "import os, sys; os.open(sys.argv[1], os.O_RDONLY)", readable + "/lock.mdb",
      ])
    #expect(lockf.code != 0 && lockf.stderr.contains("Permission denied"), "\(lockf)")
    #expect(s.run(["--db", readable, "append", "second"]).code == 0)
  }

  /// Root's command on a user's database, its first opening since its
  /// data file arrived: the lock file it makes is the user's, who goes on
  /// writing (root's, the user's writes were refused).
  @Test func anAdministratorsReadLeavesTheDatabaseItsOwners() throws {
    try #require(getuid() == 0, "this test runs msglog as user nobody and needs root")
    let s = Sandbox()
    let theirs = s.dir + "/theirs"
    #expect(chmod(s.dir, 0o711) == 0 && mkdir(theirs, 0o700) == 0 && chown(theirs, 65534, 65534) == 0)
    #expect(s.run(["--db", theirs, "append", "first"], asNobody: true).code == 0)
    #expect(!FileManager.default.fileExists(atPath: theirs + "/lock.mdb"), "the first write left a lock file")
    #expect(s.run(["--db", theirs, "list"]).stdout.hasSuffix(" first\n"))
    var lock = stat()
    #expect(lstat(theirs + "/lock.mdb", &lock) == 0 && lock.st_uid == 65534 && lock.st_gid == 65534)
    let r = s.run(["--db", theirs, "append", "second"], asNobody: true)
    #expect(r.code == 0, "\(r)")
  }

  /// The lock file LMDB makes beside an existing data file is made without
  /// those read bits (taken away after its making, another user had a
  /// moment to open it, and kept the descriptor).
  @Test func aLockFileIsMadeReadOnlyByItsWriters() throws {
    let s = Sandbox()
    let readable = s.dir + "/readable"
    #expect(mkdir(readable, 0o755) == 0 && chmod(readable, 0o755) == 0)
    #expect(s.run(["--db", readable, "append", "first"]).code == 0)
    unlink(readable + "/lock.mdb")
    let traced = runProgram(
      "/usr/bin/strace", ["-f", "-e", "trace=openat", "-o", s.dir + "/trace", Sandbox.binary, "--db", readable, "list"])
    #expect(traced.code == 0, "\(traced)")
    let trace = (try? String(contentsOfFile: s.dir + "/trace", encoding: .utf8)) ?? ""
    let making = trace.split(separator: "\n").filter { $0.contains("/lock.mdb") && $0.contains("O_CREAT") }
    #expect(making.count == 1 && making[0].contains(", 0600)"), "\(making)")
  }

  /// Root's command makes the lock file of a group's database: it gets the
  /// data file's owner, group and bits, not root's umask (the group's
  /// other writers were refused).
  @Test func anAdministratorsReadLeavesAGroupsDatabaseWritable() throws {
    try #require(getuid() == 0, "this test runs msglog as other users and needs root")
    let s = Sandbox()
    let shared = s.dir + "/shared"
    #expect(chmod(s.dir, 0o711) == 0 && mkdir(shared, 0o2770) == 0 && chown(shared, 65534, 65534) == 0)
    #expect(chmod(shared, 0o2770) == 0)
    let owner = Self.nobody + ["--"]
    let member = ["--reuid=12345", "--regid=65534", "--clear-groups", "--"]
    func run(_ who: [String], _ args: [String]) -> Run {
      runProgram("/usr/bin/setpriv", who + [Sandbox.binary, "--db", shared] + args)
    }
    #expect(run(owner, ["append", "first"]).code == 0)
    // The group may write it, as `umask 002` makes it (this process's umask is every test's).
    #expect(chmod(shared + "/data.mdb", 0o660) == 0)
    unlink(shared + "/lock.mdb")
    #expect(s.run(["--db", shared, "list"]).stdout.hasSuffix(" first\n"))
    var lock = stat()
    #expect(lstat(shared + "/lock.mdb", &lock) == 0 && lock.st_uid == 65534 && lock.st_mode & 0o777 == 0o660)
    let r = run(member, ["append", "second"])
    #expect(r.code == 0, "\(r)")
  }

  /// A set-user-id program another user runs with the directory's lock
  /// (`su` at its password prompt, given her descriptor) runs as root: her
  /// process all the same, given up on after 5 s (root's command waited for
  /// ever, taking it for its own).
  @Test func aLockHeldThroughASetUserIDProgramIsStillAnotherUsers() throws {
    try #require(getuid() == 0, "this test runs a process as another user and needs root")
    let s = Sandbox()
    s.append("first")
    #expect(chmod(s.dir, 0o711) == 0 && chmod(s.db, 0o755) == 0)
    let holder = try Holder(Self.holdDirectory, [s.db], as: ["--ruid=65534", "--euid=0"])
    let r = s.start(["append", "second"]).finish(endingAfter: 30)
    #expect(r.code == 1 && r.stderr.contains("another user's process (\(holder.process.processIdentifier))"), "\(r)")
  }

  /// The lock held by a process of the caller's own (another opening on a
  /// loaded machine, or one the user stopped) is waited for past the 5 s,
  /// as before: only another user's is given up on.
  @Test func aDirectoryLockHeldByTheCallersOwnProcessIsWaitedFor() throws {
    let s = Sandbox()
    s.append("first")
    let holder = try Holder(Self.holdDirectory, [s.db], as: nil)
    let started = Date()
    let waiting = s.start(["append", "second"])
    // Past the patience the command still waits; let go, it goes on.
    while Date().timeIntervalSince(started) < 6.5, waiting.process.isRunning { usleep(50_000) }
    #expect(waiting.process.isRunning, "the command gave up on its own user's lock: \(waiting.finish())")
    holder.release()
    let r = waiting.finish(endingAfter: 30)
    #expect(r.code == 0, "\(r)")
  }

  @Test func aLockFileAnotherUserMadeIsNotUsed() throws {
    try #require(getuid() == 0, "this test plants a file as user nobody and needs root")
    let s = Sandbox()
    let shared = Self.stickySharedDatabase(s)
    // The database's first opening after its data file arrived makes the
    // lock file: made before it by the other user (hers to write, and the
    // caller's as root).
    unlink(shared + "/lock.mdb")
    let plant = runProgram(
      "/usr/bin/setpriv", Self.nobody + ["--", "/bin/sh", "-c", "umask 022; : > \"$0\"/lock.mdb", shared])
    try #require(plant.code == 0, "\(plant)")
    let data = FileManager.default.contents(atPath: shared + "/data.mdb")
    let write = s.run(["--db", shared, "append", "second"])
    #expect(write.code == 1, "\(write)")
    #expect(
      write.stderr.hasPrefix(
        "msglog: cannot write to \(shared): it is read-only (its lock.mdb was made by another user (uid 65534) in a "
          + "directory everyone may write, and whoever may write it can stall every write; remove the file, "),
      "\(write)")
    // Reads go on without it; nothing of it was written, nor of the database.
    let list = s.run(["--db", shared, "list"])
    #expect(list.code == 0 && list.stdout.hasSuffix(" first\n"), "\(list)")
    var lock = stat()
    #expect(lstat(shared + "/lock.mdb", &lock) == 0 && lock.st_uid == 65534 && lock.st_size == 0)
    #expect(FileManager.default.contents(atPath: shared + "/data.mdb") == data)
    // Removed, msglog makes its own; one anyone may write is not used either,
    // and a process that has it open is named, to be stopped before it goes.
    unlink(shared + "/lock.mdb")
    #expect(s.run(["--db", shared, "append", "second"]).code == 0)
    let follower = s.start(["--db", shared, "log", "--follow", "--from", "1"])
    #expect(follower.waitForOutput("second"))
    #expect(chmod(shared + "/lock.mdb", 0o666) == 0 && chmod(shared + "/data.mdb", 0o644) == 0)
    let inUse = s.run(["--db", shared, "append", "third"])
    #expect(
      inUse.code == 1 && inUse.stderr.contains("its lock.mdb may be written by every user")
        && inUse.stderr.contains("stop process \(follower.process.processIdentifier), which has it open, then remove"),
      "\(inUse)")
    kill(follower.process.processIdentifier, SIGTERM)
    _ = follower.finish()
    let anyone = s.run(["--db", shared, "append", "third"])
    #expect(anyone.code == 1 && anyone.stderr.contains("its lock.mdb may be written by every user"), "\(anyone)")
    #expect(!anyone.stderr.contains("stop process"), "\(anyone)")
    #expect(chmod(shared + "/lock.mdb", 0o644) == 0)
    #expect(s.run(["--db", shared, "append", "third"]).code == 0)
    #expect(s.run(["--db", shared, "verify"]).code == 0)
  }

  /// Made while the opening waits (she holds the directory's lock, makes
  /// the file, lets go): the file LMDB opened is looked at after the
  /// opening too, and not used.
  @Test func aLockFileMadeWhileTheOpeningWaitsIsNotUsed() throws {
    try #require(getuid() == 0, "this test runs a process as user nobody and needs root")
    let s = Sandbox()
    let shared = Self.stickySharedDatabase(s)
    unlink(shared + "/lock.mdb")
    let data = FileManager.default.contents(atPath: shared + "/data.mdb")
    let holder = try Holder(
      """
      import fcntl, os, sys, time
      fd = os.open(sys.argv[1], os.O_RDONLY | os.O_DIRECTORY)
      fcntl.flock(fd, fcntl.LOCK_EX)
      print("held", flush=True)
      time.sleep(1)
      os.close(os.open(sys.argv[1] + "/lock.mdb", os.O_CREAT | os.O_WRONLY, 0o644))
      os.close(fd)
      sys.stdin.read()
      """, [shared])
    defer { holder.release() }
    let write = s.run(["--db", shared, "append", "second"])
    #expect(write.code == 1 && write.stderr.contains("its lock.mdb was made by another user (uid 65534)"), "\(write)")
    #expect(FileManager.default.contents(atPath: shared + "/data.mdb") == data)
    var lock = stat()
    #expect(lstat(shared + "/lock.mdb", &lock) == 0 && lock.st_uid == 65534)
  }

  /// In a directory only the database's writers may write (a group's, by
  /// its bits or an ACL, where each member's files keep their own group), a
  /// lock file another of them made is the database's own.
  @Test func anotherWritersLockFileIsTheDatabasesOwn() throws {
    try #require(getuid() == 0, "this test gives a file to user nobody and needs root")
    let s = Sandbox()
    s.append("first")
    #expect(chmod(s.db, 0o770) == 0 && chmod(s.db + "/data.mdb", 0o660) == 0)
    #expect(chown(s.db + "/lock.mdb", 65534, 65534) == 0 && chmod(s.db + "/lock.mdb", 0o660) == 0)
    let r = s.run(["append", "second"])
    #expect(r.code == 0, "\(r)")
  }
}
