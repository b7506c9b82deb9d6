import Foundation
import MsglogTestSupport
import Testing

#if canImport(Glibc)
  import Glibc
#endif

/// Another local user plants, in a directory anyone may write (`/tmp`),
/// what looks like a dead process's staging directory beside the path root
/// is about to back up, clone or first-write to: a symlink to a private
/// directory of root's, to the source database, or a directory of their
/// own. The sweep that runs first must follow none of them (issue 34 item
/// 3: followed, `backup` emptied the private directory and deleted the
/// source's `data.mdb` and `lock.mdb`, and reported success).
@Suite struct StagingSymlinkTests {
  /// The other user (`nobody`), as `setpriv` makes them.
  static let other = ["--reuid=65534", "--regid=65534", "--clear-groups", "--"]

  /// What an attacker left, and what must come through untouched.
  struct Plant {
    let s: Sandbox
    /// A sticky directory anyone may write, as /tmp is.
    let shared: String
    /// A directory only root may read, with a file in it.
    let secret: String
    /// The links and the directory the other user planted.
    var planted: [String] = []

    init(_ s: Sandbox) throws {
      self.s = s
      shared = s.dir + "/shared"
      secret = s.dir + "/secret"
      // The sandbox is passed through by others (not listed), as a home directory may be.
      #expect(chmod(s.dir, 0o711) == 0)
      #expect(mkdir(shared, 0o777) == 0 && chmod(shared, 0o1777) == 0)
      #expect(mkdir(secret, 0o700) == 0)
      FileManager.default.createFile(atPath: secret + "/keep", contents: Data("root's own\n".utf8))
    }

    /// As the other user: `ln -s TARGET SHARED/NAME`, or `mkdir` with LMDB's two files.
    mutating func link(_ name: String, to target: String) throws {
      let r = runProgram("/usr/bin/setpriv", StagingSymlinkTests.other + ["/bin/ln", "-s", target, shared + "/" + name])
      try #require(r.code == 0, "could not plant \(name) as nobody: \(r)")
      planted.append(shared + "/" + name)
    }

    mutating func directory(_ name: String) throws {
      let path = shared + "/" + name
      let r = runProgram(
        "/usr/bin/setpriv", StagingSymlinkTests.other + ["/bin/sh", "-c", "mkdir \"$0\" && touch \"$0/data.mdb\" \"$0/lock.mdb\"", path])
      try #require(r.code == 0, "could not plant \(name) as nobody: \(r)")
      planted.append(path)
    }

    /// The source database, the private directory and what was planted are all still there.
    func untouched(after what: String) {
      for file in ["data.mdb", "lock.mdb"] {
        #expect(FileManager.default.fileExists(atPath: s.db + "/" + file), "\(what) deleted the source's \(file)")
      }
      #expect(FileManager.default.fileExists(atPath: secret + "/keep"), "\(what) emptied root's private directory")
      for path in planted {
        var info = stat()
        #expect(lstat(path, &info) == 0 && info.st_uid == 65534, "\(what) removed the other user's \(path)")
      }
      let verify = s.run(["verify"])
      #expect(verify.code == 0, "\(what): \(verify)")
      #expect(s.run(["list"]).stdout.contains("before"), "\(what)")
    }
  }

  /// A PID no process has: one that ran and was reaped.
  static func deadPID() -> pid_t { ChildProcess.run("/bin/true") }

  @Test func backupFollowsNoPlantedLink() throws {
    try #require(getuid() == 0, "this test plants files as user nobody and needs root")
    let s = Sandbox()
    s.append("before")
    var plant = try Plant(s)
    let dead = Self.deadPID()
    try plant.link("copy.lmdb.backup-\(dead)-1", to: plant.secret)
    try plant.link("copy.lmdb.backup-\(dead)-2", to: s.db)
    try plant.directory("copy.lmdb.backup-\(dead)-3")
    let r = s.run(["backup", plant.shared + "/copy.lmdb"])
    #expect(r.code == 0 && r.stdout.hasPrefix("backed up 1 event (seq 1)"), "\(r)")
    plant.untouched(after: "backup")
    #expect(s.run(["--db", plant.shared + "/copy.lmdb", "verify"]).code == 0)
  }

  @Test func aFirstWriteFollowsNoPlantedLink() throws {
    try #require(getuid() == 0, "this test plants files as user nobody and needs root")
    let s = Sandbox()
    s.append("before")
    var plant = try Plant(s)
    let dead = Self.deadPID()
    try plant.link("new.lmdb.creating-\(dead)-1", to: plant.secret)
    try plant.link("new.lmdb.creating-\(dead)-2", to: s.db)
    try plant.link("new.lmdb.backup-\(dead)-3", to: s.db)
    try plant.directory("new.lmdb.creating-\(dead)-4")
    let r = s.run(["--db", plant.shared + "/new.lmdb", "append", "first"])
    #expect(r.code == 0, "\(r)")
    plant.untouched(after: "a first write")
  }

  /// A database in a directory others may write (a team's shared one):
  /// the other user swaps `lock.mdb`, then `data.mdb`, for a link to a
  /// file of root's. LMDB would open either by name and write the lock
  /// file's header as it opens: a tester's own file became a lock file.
  /// Every command refuses the database instead, the file stays as it was,
  /// and the database serves again once the link is gone.
  @Test func aPlantedLockOrDataFileLinkIsRefused() throws {
    try #require(getuid() == 0, "this test plants files as user nobody and needs root")
    let s = Sandbox()
    s.append("before")
    var plant = try Plant(s)
    #expect(chmod(s.db, 0o777) == 0)
    let target = plant.secret + "/keep"
    for file in ["lock.mdb", "data.mdb"] {
      let moved = s.db + "/" + file + ".kept"
      #expect(rename(s.db + "/" + file, moved) == 0)
      let r = runProgram("/usr/bin/setpriv", Self.other + ["/bin/ln", "-s", target, s.db + "/" + file])
      try #require(r.code == 0, "could not plant \(file) as nobody: \(r)")
      for args in [["list"], ["append", "after"], ["verify"], ["log"]] {
        let refused = s.run(args)
        let said = refused.stderr.contains("its \(file) is a symbolic link")
        #expect(refused.code == 1 && said, "\(file), \(args): \(refused)")
      }
      #expect(try String(contentsOfFile: target, encoding: .utf8) == "root's own\n", "\(file): the link was followed")
      #expect(unlink(s.db + "/" + file) == 0 && rename(moved, s.db + "/" + file) == 0)
      #expect(s.run(["list"]).stdout.contains("before"))
    }
    plant.planted = []
    plant.untouched(after: "the refusals")
  }

  @Test func cloneFollowsNoPlantedLink() throws {
    try #require(getuid() == 0, "this test plants files as user nobody and needs root")
    let source = Sandbox()
    source.append("served")
    let server = try ServedLog.running(source)
    defer { #expect(server.stop().code == 0) }
    let s = Sandbox()
    s.append("before")
    var plant = try Plant(s)
    let dead = Self.deadPID()
    try plant.link("replica.lmdb.cloning-\(dead)-1", to: plant.secret)
    try plant.link("replica.lmdb.cloning-\(dead)-2", to: s.db)
    try plant.directory("replica.lmdb.cloning-\(dead)-3")
    let r = s.run(["--db", plant.shared + "/replica.lmdb", "clone", try #require(server.url)])
    #expect(r.code == 0, "\(r)")
    plant.untouched(after: "clone")
    #expect(s.run(["--db", plant.shared + "/replica.lmdb", "list"]).stdout.contains("served"))
  }

  /// A backup into the database's own directory is refused before anything
  /// is swept or made there.
  @Test func aBackupInsideTheDatabaseIsRefused() throws {
    let s = Sandbox()
    s.append("before")
    let before = try FileManager.default.contentsOfDirectory(atPath: s.db).sorted()
    for dest in [s.db + "/copy", s.db + "/./copy", s.dir + "/../" + (s.dir as NSString).lastPathComponent + "/"
      + (s.db as NSString).lastPathComponent + "/copy"]
    {
      let r = s.run(["backup", dest])
      #expect(r.code == 1, "\(r)")
      #expect(
        r.stderr.contains("cannot back up to \(dest): it is inside the database's own directory")
          && r.stderr.contains("outside the database's directory"), "\(r)")
    }
    #expect(try FileManager.default.contentsOfDirectory(atPath: s.db).sorted() == before)
    #expect(s.run(["verify"]).code == 0)
  }
}
