import MsglogCore

#if canImport(Glibc)
  import Glibc
#endif

extension LMDBStore {
  /// Wakes when the database may have appeared at `path`: a first write
  /// renames its staging directory into the parent directory, or moves
  /// `data.mdb` into an empty directory given as the path (`DatabaseFiles.
  /// install`), so the directory that will hold the new entry is watched
  /// for entries made or moved in. A parent that does not exist yet cannot
  /// be watched: then the follower looks again every second.
  package func watchCreation() throws -> any CommitWatcher {
    let events = UInt32(IN_CREATE | IN_MOVED_TO)
    let directory = DatabaseFiles.isDirectory(path) ? path : DatabaseFiles.parent(of: path)
    do {
      return try InotifyWatcher(file: directory, shown: path, events: events)
    } catch {
      return IntervalWatcher(milliseconds: 1_000)
    }
  }

  /// An empty database where there is none, made as a first write makes
  /// one (built aside, put in place whole); one that is there is left as
  /// it is. LMDB has no privileges to share out: whoever may write the
  /// directory may use every table.
  package func initialize() throws -> LogInitialization {
    guard access == .readWrite else {
      throw MsglogError.readOnly(location: path, store: .lmdb, reason: "opened for reading only")
    }
    return try translatingErrors {
      if try tables(creating: true) != nil { return .ready }
      return try createDatabase { _ in } == nil ? .ready : .created
    }
  }
}
