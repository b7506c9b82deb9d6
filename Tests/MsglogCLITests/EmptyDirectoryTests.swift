import Foundation
import MsglogTestSupport
import Testing

#if canImport(Glibc)
  import Glibc
#endif

/// An existing empty directory given as `--db` (a shared folder, a
/// container's volume) gets the database inside it and is kept: its inode,
/// owner, mode and set-group-id bit, and its mount. The first write is
/// still atomic for readers, a refused one still leaves it empty, and first
/// writers racing into it make one database.
@Suite struct EmptyDirectoryTests {
  func info(_ path: String) -> stat {
    var result = stat()
    #expect(stat(path, &result) == 0, "\(path)")
    return result
  }

  func entries(_ path: String) -> [String] {
    ((try? FileManager.default.contentsOfDirectory(atPath: path)) ?? []).sorted()
  }

  /// Staging directories anywhere near: beside the database or inside it.
  func staging(_ s: Sandbox, _ db: String) -> [String] {
    (entries(s.dir) + entries(db)).filter { $0.contains("creating-") }
  }

  /// `mkdir -m 2775 shared` with a group: the directory the user made is
  /// the one that holds the database, and the data file has its group.
  @Test func aSetGroupIDDirectoryIsKept() throws {
    try #require(getuid() == 0, "this test gives the directory a group of another user and needs root")
    let s = Sandbox()
    let shared = s.dir + "/shared"
    #expect(mkdir(shared, 0o700) == 0 && chmod(shared, 0o2775) == 0 && chown(shared, 0, 100) == 0)
    let before = info(shared)
    let r = s.run(["--db", shared, "append", "hello"])
    #expect(r.code == 0, "\(r)")
    let after = info(shared)
    #expect(after.st_ino == before.st_ino, "the directory was replaced")
    #expect(after.st_mode == before.st_mode, "mode \(String(after.st_mode, radix: 8)), was \(String(before.st_mode, radix: 8))")
    #expect(after.st_mode & S_ISGID != 0 && after.st_gid == 100 && after.st_uid == 0)
    #expect(info(shared + "/data.mdb").st_gid == 100, "the data file does not have the directory's group")
    #expect(entries(shared).allSatisfy { ["data.mdb", "lock.mdb"].contains($0) }, "\(entries(shared))")
    #expect(s.run(["--db", shared, "list"]).stdout.hasSuffix("hello\n"))
    #expect(s.run(["--db", shared, "verify"]).code == 0)
  }

  /// A refused first write leaves the directory as it was: empty, the same one.
  @Test func aRefusedFirstWriteLeavesItEmpty() throws {
    let s = Sandbox()
    let empty = s.dir + "/empty"
    #expect(mkdir(empty, 0o755) == 0)
    let inode = info(empty).st_ino
    for args in [["move", "0", "1"], ["remove", "12345678"], ["import"]] {
      let r = s.run(["--db", empty] + args, stdin: Data("{\"op\":\"append\",\"text\":\"x\"}\n{\"op\":\"bad\"}\n".utf8))
      #expect(r.code == 1, "\(args): \(r)")
      #expect(entries(empty).isEmpty && info(empty).st_ino == inode, "\(args) left \(entries(empty))")
    }
    let r = s.run(["--db", empty, "list"])
    #expect(r.code == 1 && r.stderr.contains("(the directory is empty)"), "\(r)")
  }

  /// An empty mount point (a container's volume): the database is made
  /// inside it, on its file system; it cannot be renamed over.
  @Test func anEmptyMountPointHoldsTheDatabase() throws {
    let s = Sandbox()
    let volume = s.dir + "/volume"
    #expect(mkdir(volume, 0o755) == 0)
    try #require(mountTmpfs(at: volume, size: "16m"), "this test mounts a tmpfs and needs root")
    defer { unmount(volume) }
    let device = info(volume).st_dev
    #expect(device != info(s.dir).st_dev)
    let r = s.run(["--db", volume, "append", "on the volume"])
    #expect(r.code == 0, "\(r)")
    #expect(info(volume).st_dev == device && info(volume + "/data.mdb").st_dev == device)
    #expect(s.run(["--db", volume, "list"]).stdout.hasSuffix("on the volume\n"))
    #expect(staging(s, volume).isEmpty, "\(staging(s, volume))")
  }

  /// A user who owns the empty directory but may not write its parent (a
  /// home directory's `~/data`, a volume mounted under `/`): nothing can be
  /// made beside it, so the database is made in it.
  @Test func aDirectoryWhoseParentIsNotWritable() throws {
    try #require(getuid() == 0, "this test switches to user nobody and needs root")
    let s = Sandbox()
    let parent = s.dir + "/locked"
    let mine = parent + "/mine"
    #expect(mkdir(parent, 0o755) == 0 && mkdir(mine, 0o700) == 0 && chown(mine, 65534, 65534) == 0)
    #expect(chmod(s.dir, 0o755) == 0)
    let r = s.run(["--db", mine, "append", "mine"], asNobody: true)
    #expect(r.code == 0, "\(r)")
    #expect(info(mine + "/data.mdb").st_uid == 65534)
    let list = s.run(["--db", mine, "list"], asNobody: true)
    #expect(list.code == 0 && list.stdout.hasSuffix("mine\n"), "\(list)")
  }

  /// First writers from several processes race into one empty directory:
  /// one database, every write in it, seqs without a gap, no staging left.
  @Test func concurrentFirstWritersMakeOneDatabase() throws {
    let s = Sandbox()
    let empty = s.dir + "/empty"
    #expect(mkdir(empty, 0o755) == 0)
    let inode = info(empty).st_ino
    let writers = 8
    let children = (0..<writers).map { w in
      s.start(
        ["--db", empty, "append", "--lines"], stdin: Data((0..<5).map { "w\(w) line \($0)" }.joined(separator: "\n").utf8))
    }
    for child in children {
      let r = child.finish()
      #expect(r.code == 0, "\(r)")
    }
    #expect(info(empty).st_ino == inode, "the directory was replaced")
    let log = s.run(["--db", empty, "log", "--json"])
    #expect(log.code == 0, "\(log)")
    let events = log.lines.compactMap { try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] }
    #expect(events.map { $0["seq"] as? Int } == Array(1...(writers * 5)))
    #expect(Set(events.compactMap { $0["text"] as? String }).count == writers * 5)
    #expect(s.run(["--db", empty, "verify"]).code == 0)
    #expect(entries(empty).allSatisfy { ["data.mdb", "lock.mdb"].contains($0) }, "\(entries(empty))")
    #expect(staging(s, empty).isEmpty, "\(staging(s, empty))")
  }

  /// `--db shared/` names the directory `shared`: nothing is made inside a
  /// path that does not exist yet, and an existing one is kept.
  @Test func aTrailingSlashNamesTheDirectory() throws {
    let s = Sandbox()
    var r = s.run(["--db", s.dir + "/new.lmdb/", "append", "x"])
    #expect(r.code == 0, "\(r)")
    #expect(entries(s.dir + "/new.lmdb").contains("data.mdb"))
    let existing = s.dir + "/existing"
    #expect(mkdir(existing, 0o755) == 0)
    let inode = info(existing).st_ino
    r = s.run(["--db", existing + "/", "append", "y"])
    #expect(r.code == 0 && info(existing).st_ino == inode, "\(r)")
    #expect(staging(s, existing).isEmpty && entries(s.dir + "/new.lmdb").allSatisfy { !$0.contains("creating-") })
  }
}
