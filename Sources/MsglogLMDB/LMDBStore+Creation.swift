#if canImport(Glibc)
  import Glibc
#endif
import MsglogCore

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
}
