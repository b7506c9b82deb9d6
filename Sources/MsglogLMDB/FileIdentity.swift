#if canImport(Glibc)
  import Glibc
#endif

/// Which file a path or a descriptor is: its device and inode. Two equal
/// identities are one file; a file removed and made anew at the same path
/// has another.
package struct FileIdentity: Hashable, Sendable {
  package var device: UInt64
  package var inode: UInt64

  init(_ status: stat) {
    device = UInt64(status.st_dev)
    inode = UInt64(status.st_ino)
  }

  /// The file at `path` now; nil when there is none.
  init?(path: String) {
    var status = stat()
    guard stat(path, &status) == 0 else { return nil }
    self.init(status)
  }
}
