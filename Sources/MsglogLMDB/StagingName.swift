import MsglogCore

#if canImport(Glibc)
  import Glibc
#endif

/// The private names under which a database is built before anyone may
/// see it, and how what a killed process left under one is told from what
/// a live one is building.
///
/// A database built for a path that does not exist goes beside it,
/// `X.lmdb.creating-PID-N`, and the whole directory is renamed into place.
/// One built for an existing empty directory goes inside it,
/// `X.lmdb/.msglog-creating-PID-N`, on the same file system even when the
/// directory is a mount point, and only its data file is moved out (see
/// `DatabaseFiles.install`). `cloning` and `backup` name the same for a
/// clone and a backup. `DatabaseFiles.probe` sees past the inside ones:
/// a directory that holds nothing else is still empty.
package struct StagingName: Equatable {
  package enum Purpose: String, CaseIterable {
    case creating, cloning, backup
  }

  package var purpose: Purpose
  /// The process building it.
  package var pid: pid_t

  /// What an inside name starts with.
  static let insidePrefix = ".msglog-"

  /// A new name: `X.PURPOSE-PID-N` beside `path`, or `X/.msglog-PURPOSE-PID-N` inside it.
  package static func make(for path: String, purpose: Purpose, inside: Bool) -> String {
    let base = DatabaseFiles.trimmed(path)
    let tail = "\(purpose.rawValue)-\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
    return inside ? base + "/" + insidePrefix + tail : base + "." + tail
  }

  package init(purpose: Purpose, pid: pid_t) {
    self.purpose = purpose
    self.pid = pid
  }

  /// Reads `PURPOSE-PID-N`; nil for anything else.
  init?(tail: Substring) {
    let parts = tail.split(separator: "-", omittingEmptySubsequences: false)
    func digits(_ part: Substring) -> Bool { !part.isEmpty && part.allSatisfy { $0.isASCII && $0.isNumber } }
    guard parts.count == 3, let purpose = Purpose(rawValue: String(parts[0])), digits(parts[1]), digits(parts[2]),
      let pid = pid_t(parts[1]), pid > 0, UInt32(parts[2]) != nil
    else { return nil }
    self.init(purpose: purpose, pid: pid)
  }

  /// The staging name an entry of a database directory is, if it is one.
  package init?(inside name: String) {
    guard name.hasPrefix(StagingName.insidePrefix) else { return nil }
    self.init(tail: name.dropFirst(StagingName.insidePrefix.count))
  }

  /// The staging name an entry beside the database `base` (its last path
  /// component) is, if it is one.
  package init?(beside name: String, of base: String) {
    guard name.count > base.count + 1, name.hasPrefix(base + ".") else { return nil }
    self.init(tail: name.dropFirst(base.count + 1))
  }

  /// Whether the process that built it is gone: kill(2) finds no such
  /// process, and nobody holds LMDB's lock on its lock file (a process in
  /// another PID namespace, a container sharing the volume, may be at work
  /// on it under a number that means nothing here).
  ///
  /// - Parameter directory: the staging directory, open (`OwnDirectory`):
  ///   its lock file is looked at there, never through a link.
  func isAbandoned(lockIn directory: Int32) -> Bool {
    guard kill(pid, 0) != 0, errno == ESRCH else { return false }
    let fd = openat(directory, "lock.mdb", O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC)
    guard fd >= 0 else { return true }
    defer { close(fd) }
    var info = stat()
    guard fstat(fd, &info) == 0, (info.st_mode & S_IFMT) == S_IFREG else { return true }
    // LMDB holds a shared lock on byte 0 while the environment is open.
    var probe = flock()
    probe.l_type = Int16(F_WRLCK)
    probe.l_whence = Int16(SEEK_SET)
    probe.l_start = 0
    probe.l_len = 1
    guard fcntl(fd, F_GETLK, &probe) == 0 else { return true }
    return probe.l_type == Int16(F_UNLCK)
  }
}
