/// What LMDB reported when a call failed, by what it means to a user of
/// the database (`MsglogError.lmdbFailure`): a case to switch on, with
/// LMDB's code where only that says more. Its words name no LMDB function
/// or constant (`description`).
public enum LMDBFailure: Equatable, Sendable, CustomStringConvertible {
  /// LMDB cannot read the file's pages (`MDB_CORRUPTED`, `MDB_PAGE_NOTFOUND`, `MDB_INVALID`).
  case damagedPages
  /// The file was written by an LMDB whose format this one does not read.
  case incompatibleVersion
  /// Every reader slot of the environment is taken.
  case tooManyReaders
  /// The map could not grow.
  case couldNotGrow
  /// An internal table of LMDB's ran out (`MDB_TXN_FULL`, `MDB_DBS_FULL` …): its code.
  case resourceExhausted(code: Int32)
  /// LMDB reported what msglog never lets it reach (`MDB_BAD_TXN` …): its code.
  case internalError(code: Int32)
  /// The file could not be written past the process's file-size limit
  /// (`ulimit -f`, systemd's `LimitFSIZE`), in bytes: a write cut short
  /// there is an I/O error to LMDB, or a file too large.
  case fileSizeLimit(bytes: UInt64)
  /// The data file is shorter than the pages in use (truncated, copied in
  /// part): `bytes` long, and `lostPage` (of `pageSize` bytes), which the
  /// commit read uses (in a table or the free list), lies past its end.
  /// Nothing is written into such a file.
  case fileCutShort(bytes: UInt64, lostPage: UInt64, pageSize: UInt64)
  /// The operating system refused (an errno).
  case system(errno: Int32)

  /// The data file lacks pages in use (`fileCutShort`).
  public var isFileCutShort: Bool {
    if case .fileCutShort = self { return true }
    return false
  }

  public var description: String {
    switch self {
    case .damagedPages: return "the database file is damaged (LMDB cannot read its pages)"
    case .incompatibleVersion: return "the database was written by an incompatible version of LMDB"
    case .tooManyReaders: return "too many processes are reading the database at once"
    case .couldNotGrow: return "the database could not grow"
    case .resourceExhausted(let code): return "the database ran out of an internal resource (\(code))"
    case .internalError(let code): return "the database reported an internal error (\(code))"
    case .fileSizeLimit(let bytes):
      return "the database file could not be written past this process's file-size limit, \(bytes) bytes "
        + "(ulimit -f, or LimitFSIZE in a systemd unit)"
    case .fileCutShort(let bytes, let page, let size):
      let (start, overflow) = page.multipliedReportingOverflow(by: size)
      let bytesOfPage = overflow ? "" : " (bytes \(start)–\(start &+ size &- 1))"
      return "the database file is cut short: it is \(bytes) bytes, and page \(page), which is in use, "
        + "lies past its end\(bytesOfPage); truncated, or copied in part?"
    case .system(let errno): return systemMessage(errno)
    }
  }
}
