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
  /// A program run as user `nobody` that says "held" once it holds its
  /// lock, and lets go when its standard input closes (or it is killed).
  final class Holder {
    let process = Process()
    let input = Pipe()

    init(_ script: String, _ arguments: [String]) throws {
      process.executableURL = URL(fileURLWithPath: "/usr/bin/setpriv")
      process.arguments =
        ["--reuid=65534", "--regid=65534", "--clear-groups", "--", "/usr/bin/python3", "-c", script] + arguments
      let output = Pipe()
      process.standardInput = input
      process.standardOutput = output
      process.standardError = FileHandle.nullDevice
      try process.run()
      try #require(readsUntil("held", from: output), "user nobody did not take the lock")
    }

    func release() {
      try? input.fileHandleForWriting.close()
      process.waitUntilExit()
    }

    deinit { release() }
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
    for args in [["append", "second"], ["list"]] {
      let started = Date()
      let r = s.run(args)
      #expect(r.code == 1, "\(args): \(r)")
      #expect(
        r.stderr.hasPrefix(
          "msglog: cannot read \(s.db): another process has held the lock on its directory for 5 s; "),
        "\(args): \(r)")
      #expect(Date().timeIntervalSince(started) >= 4.5, "\(args) gave up before its patience")
    }
    // Let go while a command waits: it goes on.
    let waiting = s.start(["append", "third"])
    usleep(500_000)
    holder.release()
    let r = waiting.finish(endingAfter: 30)
    #expect(r.code == 0, "\(r)")
    let after = s.export()
    #expect(after.hasPrefix(before) && after.split(separator: "\n").count == 2, "\(after)")
  }

  @Test func aLockFileAnotherUserMadeIsNotUsed() throws {
    try #require(getuid() == 0, "this test plants a file as user nobody and needs root")
    let s = Sandbox()
    // A shared, sticky directory anyone may write is the database's own.
    let shared = s.dir + "/shared"
    #expect(chmod(s.dir, 0o711) == 0)
    #expect(mkdir(shared, 0o777) == 0 && chmod(shared, 0o1777) == 0)
    #expect(s.run(["--db", shared, "append", "first"]).code == 0)
    // The database's first opening after its data file arrived makes the
    // lock file: made before it by the other user, with every bit set.
    unlink(shared + "/lock.mdb")
    let plant = runProgram(
      "/usr/bin/setpriv",
      [
        "--reuid=65534", "--regid=65534", "--clear-groups", "--", "/bin/sh", "-c", "umask 0; : > \"$0\"/lock.mdb",
        shared,
      ])
    try #require(plant.code == 0, "\(plant)")
    let data = FileManager.default.contents(atPath: shared + "/data.mdb")
    let write = s.run(["--db", shared, "append", "second"])
    #expect(write.code == 1, "\(write)")
    #expect(
      write.stderr.hasPrefix(
        "msglog: cannot write to \(shared): it is read-only (its lock.mdb was made by another user (uid 65534), "),
      "\(write)")
    // Reads go on without it; nothing of it was written, nor of the database.
    let list = s.run(["--db", shared, "list"])
    #expect(list.code == 0 && list.stdout.hasSuffix(" first\n"), "\(list)")
    var lock = stat()
    #expect(lstat(shared + "/lock.mdb", &lock) == 0 && lock.st_uid == 65534 && lock.st_size == 0)
    #expect(FileManager.default.contents(atPath: shared + "/data.mdb") == data)
    // Removed, msglog makes its own; one anyone may write is not used either.
    unlink(shared + "/lock.mdb")
    #expect(s.run(["--db", shared, "append", "second"]).code == 0)
    #expect(chmod(shared + "/lock.mdb", 0o666) == 0 && chmod(shared + "/data.mdb", 0o644) == 0)
    let anyone = s.run(["--db", shared, "append", "third"])
    #expect(anyone.code == 1 && anyone.stderr.contains("may be written by anyone"), "\(anyone)")
    #expect(chmod(shared + "/lock.mdb", 0o644) == 0)
    #expect(s.run(["--db", shared, "append", "third"]).code == 0)
    #expect(s.run(["--db", shared, "verify"]).code == 0)
  }

  /// A group-shared database (`mkdir -m 2775`): a lock file another member
  /// of the group made is the group's own.
  @Test func aGroupMembersLockFileIsTheDatabasesOwn() throws {
    try #require(getuid() == 0, "this test gives a file to user nobody and needs root")
    let s = Sandbox()
    s.append("first")
    #expect(chmod(s.db + "/data.mdb", 0o660) == 0)
    // Made by another member (nobody, in root's group here), group-writable.
    #expect(chown(s.db + "/lock.mdb", 65534, 0) == 0 && chmod(s.db + "/lock.mdb", 0o660) == 0)
    let r = s.run(["append", "second"])
    #expect(r.code == 0, "\(r)")
  }
}
