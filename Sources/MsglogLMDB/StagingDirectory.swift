import MsglogCore

#if canImport(Glibc)
  import Glibc
#endif

/// A directory a database is built in before it is put in place
/// (`DatabaseFiles.install`), removed with whatever is left in it when it
/// goes out of scope, and by a signal that ends the process before then
/// (`StagingCleanup`).
package struct StagingDirectory: ~Copyable {
  package let path: String
  private let slot: Int?

  /// Makes a staging directory for a database that will be put at
  /// `target`: beside it when nothing is there, inside it when it is an
  /// empty directory (see `StagingName`). It takes the permission bits of
  /// the directory the database will live in (a new one is owner-only),
  /// and so do the files LMDB makes in it.
  ///
  /// Nil when a database is at `target` already (another process made it).
  ///
  /// - Parameter shown: the path to name in messages.
  package static func make(for target: String, purpose: StagingName.Purpose, shown: String) throws
    -> StagingDirectory?
  {
    guard let (path, mode) = try place(for: target, purpose: purpose, shown: shown) else { return nil }
    // Recorded first: a signal between the two finds nothing to remove.
    let staging = StagingDirectory(path: path, slot: StagingCleanup.remember(path))
    guard mkdir(path, mode) == 0 else {
      throw MsglogError.cannotCreate(location: shown, reason: systemMessage(errno))
    }
    return staging
  }

  private init(path: String, slot: Int?) {
    self.path = path
    self.slot = slot
  }

  /// The staging path for `target` and the mode to make it with; nil when
  /// a database is there already.
  private static func place(for target: String, purpose: StagingName.Purpose, shown: String) throws
    -> (String, mode_t)?
  {
    let target = DatabaseFiles.trimmed(target)
    switch try DatabaseFiles.probe(target, shown: shown) {
    case .missing:
      guard DatabaseFiles.isDirectory(DatabaseFiles.parent(of: target)) else {
        throw MsglogError.cannotCreate(location: shown, reason: "its parent directory does not exist")
      }
      return (StagingName.make(for: target, purpose: purpose, inside: false), 0o700)
    case .emptyDirectory:
      var info = stat()
      let mode = stat(target, &info) == 0 ? info.st_mode & 0o7777 : 0o700
      return (StagingName.make(for: target, purpose: purpose, inside: true), mode)
    case .database:
      return nil
    }
  }

  deinit {
    DatabaseFiles.removeStaging(path)
    StagingCleanup.forget(slot)
  }
}
