import FoundationEssentials
import MsglogCore
import MsglogLMDB

#if canImport(Glibc)
  import Glibc
#endif

/// Creating a database atomically: built beside its path, renamed into place.
enum DatabaseCreation {
  /// Runs `write` on a new database in a private directory next to `path`
  /// and renames it to `path` when `write` succeeds. Returns nil when `path`
  /// appeared in the meantime (another process created it), so that the
  /// caller writes into that one instead. On any error the directory is removed.
  static func create<R>(at path: String, _ write: (LMDBStore) throws -> R) throws -> R? {
    let parent = path.contains("/") ? String(path[..<path.lastIndex(of: "/")!]) : "."
    guard PathKind.of(parent.isEmpty ? "/" : parent) == .directory else {
      throw MsglogError.refused("cannot create the database \(path): its parent directory does not exist")
    }
    let staging = path + ".creating-\(getpid())"
    defer { try? FileManager.default.removeItem(atPath: staging) }
    let result: R
    do {
      // The store is closed when this scope ends, before the rename.
      result = try write(try LMDBStore(path: staging, create: true, shown: path))
    }
    if rename(staging, path) != 0 {
      if errno == EEXIST || errno == ENOTEMPTY { return nil }
      throw MsglogError.refused("cannot create the database \(path): \(systemMessage(errno))")
    }
    // The commit is on disk; make the new name durable too before success is printed.
    let directory = open(parent.isEmpty ? "/" : parent, O_RDONLY | O_DIRECTORY)
    if directory >= 0 {
      fsync(directory)
      close(directory)
    }
    return result
  }
}
