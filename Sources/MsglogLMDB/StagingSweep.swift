import MsglogCore

#if canImport(Glibc)
  import Glibc
#endif

/// Removing staging directories without being turned against anyone.
///
/// A staging name sits beside a database, often in a directory others may
/// write (`/tmp`, a shared folder): anyone can put a symlink there under a
/// name that looks like a dead process's staging directory. Followed, it
/// made root's `backup` empty a directory of root's and delete the source
/// database's `data.mdb` and `lock.mdb`. So only what is really a
/// directory, and the caller's own, is swept: looked at with `lstat`,
/// opened with `O_NOFOLLOW` (and checked to be what was looked at), its
/// files unlinked relative to it and it removed relative to its parent —
/// no path is ever resolved again in between, and a link is never followed
/// (one inside is unlinked itself).
extension DatabaseFiles {
  /// Removes what killed processes left while building a database for
  /// `path`: staging directories beside it and inside it whose builder is
  /// gone. A live builder's are left alone, and so is anything that is not
  /// a directory of this user's.
  package static func sweepStaging(for path: String) {
    let base = trimmed(path)
    let name = String(base[(base.lastIndex(of: "/").map { base.index(after: $0) } ?? base.startIndex)...])
    sweep(in: parent(of: base)) { StagingName(beside: $0, of: name) }
    sweep(in: base) { StagingName(inside: $0) }
  }

  /// Sweeps the abandoned staging directories `recognise` names in `directory`.
  private static func sweep(in directory: String, _ recognise: (String) -> StagingName?) {
    let fd = open(directory, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
    guard fd >= 0 else { return }
    defer { close(fd) }
    for entry in entries(of: fd) {
      guard let staging = recognise(entry), let found = OwnDirectory(entry, in: fd) else { continue }
      if staging.isAbandoned(lockIn: found.fd) { found.remove() }
    }
  }

  /// Removes a staging directory this process made and the files LMDB made
  /// in it: what is left after a refused first write, or nothing after a
  /// rename.
  package static func removeStaging(_ path: String) {
    let path = trimmed(path)
    let fd = open(parent(of: path), O_RDONLY | O_DIRECTORY | O_CLOEXEC)
    guard fd >= 0 else { return }
    defer { close(fd) }
    let name = String(path[(path.lastIndex(of: "/").map { path.index(after: $0) } ?? path.startIndex)...])
    OwnDirectory(name, in: fd)?.remove()
  }

  /// The names in an open directory (without `.` and `..`); empty when it
  /// cannot be read. `directory` stays open, and is read from its start.
  static func entries(of directory: Int32) -> [String] {
    let copy = dup(directory)
    guard copy >= 0 else { return [] }
    guard let stream = fdopendir(copy) else {
      close(copy)
      return []
    }
    defer { closedir(stream) }
    // A dup shares its file offset: another reading may have moved it.
    rewinddir(stream)
    var names: [String] = []
    while let entry = readdir(stream) {
      let name = withUnsafeBytes(of: entry.pointee.d_name) { raw in
        String(decoding: raw.prefix { $0 != 0 }, as: UTF8.self)
      }
      if name != "." && name != ".." { names.append(name) }
    }
    return names
  }
}

/// An entry of an open directory that is really a directory owned by this
/// process's user, open without following a link: nil for a symlink, a
/// file, another user's directory, or one swapped in after it was looked at.
struct OwnDirectory: ~Copyable {
  let parent: Int32
  let name: String
  let fd: Int32

  init?(_ name: String, in parent: Int32) {
    var seen = stat()
    guard fstatat(parent, name, &seen, AT_SYMLINK_NOFOLLOW) == 0, (seen.st_mode & S_IFMT) == S_IFDIR,
      seen.st_uid == geteuid()
    else { return nil }
    let fd = openat(parent, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)
    guard fd >= 0 else { return nil }
    var opened = stat()
    guard fstat(fd, &opened) == 0, opened.st_dev == seen.st_dev, opened.st_ino == seen.st_ino else {
      close(fd)
      return nil
    }
    self.parent = parent
    self.name = name
    self.fd = fd
  }

  deinit { close(fd) }

  /// Unlinks what is in it but directories (LMDB makes none; a link is
  /// removed, not followed) — a staging directory in it (a clone builds
  /// its replica in one, `X.cloning-…/.msglog-creating-…`) removed the same
  /// way once its builder is gone too — then removes it if that left it
  /// empty.
  consuming func remove() {
    for entry in DatabaseFiles.entries(of: fd) {
      var info = stat()
      guard fstatat(fd, entry, &info, AT_SYMLINK_NOFOLLOW) == 0 else { continue }
      guard (info.st_mode & S_IFMT) == S_IFDIR else {
        unlinkat(fd, entry, 0)
        continue
      }
      guard let staging = StagingName(inside: entry), let inner = OwnDirectory(entry, in: fd) else { continue }
      if staging.isAbandoned(lockIn: inner.fd) { inner.remove() }
    }
    unlinkat(parent, name, AT_REMOVEDIR)
  }
}
