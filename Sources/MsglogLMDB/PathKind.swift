#if canImport(Glibc)
  import Glibc
#endif

/// What is at a path, from stat(2): enough to tell a database directory from
/// a file or nothing, without Foundation's file manager.
package enum PathKind: Equatable, Sendable {
  case missing
  case directory
  case file

  package static func of(_ path: String) -> PathKind {
    var info = stat()
    guard stat(path, &info) == 0 else { return .missing }
    return (info.st_mode & S_IFMT) == S_IFDIR ? .directory : .file
  }
}
