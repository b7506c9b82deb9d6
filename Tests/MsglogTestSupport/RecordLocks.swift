import Foundation

#if canImport(Glibc)
  import Glibc
#endif

/// A POSIX record lock some process holds, as `/proc/locks` lists it:
/// LMDB holds them on `lock.mdb` (a read lock on byte 0 while an
/// environment is open, a write lock there while one is first opened).
public struct RecordLock: Equatable, Sendable {
  public var pid: pid_t
  public var writes: Bool
  public var start: String
  public var end: String

  /// The POSIX locks held on the file at `path` now (none when it is missing).
  public static func held(on path: String) -> [RecordLock] {
    var status = stat()
    guard stat(path, &status) == 0,
      let locks = try? String(contentsOfFile: "/proc/locks", encoding: .utf8)
    else { return [] }
    let inode = Substring(String(status.st_ino))
    return locks.split(separator: "\n").compactMap { line in
      // "1: POSIX  ADVISORY  WRITE 4242 08:01:1234 0 0"
      let fields = line.split(separator: " ")
      guard fields.count >= 8, fields[1] == "POSIX", fields[5].split(separator: ":").last == inode,
        let pid = pid_t(fields[4])
      else { return nil }
      return RecordLock(pid: pid, writes: fields[3] == "WRITE", start: String(fields[6]), end: String(fields[7]))
    }
  }
}
