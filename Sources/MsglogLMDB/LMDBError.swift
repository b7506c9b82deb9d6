import CLMDB
import MsglogCore

#if canImport(Glibc)
  import Glibc
#endif

/// A failed LMDB call: the C return code and the function that returned it.
package struct LMDBError: Error, Equatable, CustomStringConvertible, Sendable {
  package var code: Int32
  package var function: String

  package init(_ code: Int32, _ function: String) {
    self.code = code
    self.function = function
  }

  package static let notFound: Int32 = MDB_NOTFOUND
  package static let keyExists: Int32 = MDB_KEYEXIST
  package static let mapFull: Int32 = MDB_MAP_FULL
  package static let mapResized: Int32 = MDB_MAP_RESIZED
  package static let invalid: Int32 = MDB_INVALID
  package static let versionMismatch: Int32 = MDB_VERSION_MISMATCH
  package static let corrupted: Int32 = MDB_CORRUPTED
  package static let readersFull: Int32 = MDB_READERS_FULL

  /// The file system refused to give the database more room.
  package var isOutOfSpace: Bool { code == ENOSPC || code == EDQUOT || code == EFBIG }

  /// `mdb_strerror`'s text (which covers errno values too), naming the call:
  /// for developers and logs.
  package var description: String {
    "\(function) failed: \(String(cString: mdb_strerror(code)))"
  }

  /// What went wrong, by what it means to a user: no LMDB function or
  /// constant names.
  package var failure: LMDBFailure {
    switch code {
    case LMDBError.corrupted, MDB_PAGE_NOTFOUND, LMDBError.invalid: return .damagedPages
    case LMDBError.versionMismatch: return .incompatibleVersion
    case LMDBError.readersFull: return .tooManyReaders
    case LMDBError.mapFull: return .couldNotGrow
    case MDB_TLS_FULL, MDB_TXN_FULL, MDB_CURSOR_FULL, MDB_PAGE_FULL, MDB_DBS_FULL: return .resourceExhausted(code: code)
    case MDB_KEYEXIST, MDB_NOTFOUND, MDB_MAP_RESIZED, MDB_INCOMPATIBLE, MDB_BAD_RSLOT, MDB_BAD_TXN, MDB_BAD_VALSIZE,
      MDB_BAD_DBI:
      return .internalError(code: code)
    default: return .system(errno: code)
    }
  }
}

extension MsglogError {
  /// LMDB's failure as msglog's error: out of room (the file system's
  /// words), or any other by what it means (`LMDBFailure`).
  ///
  /// `dataFile`: the file being written, when known. A write cut short at
  /// the process's file-size limit leaves it exactly that long, which LMDB
  /// reports as an I/O error (a short write) or as a file too large: it is
  /// said as the limit only then, not for any I/O error of a process that
  /// has a limit (a short write on a full disk, a failed sync).
  init(_ error: LMDBError, writing dataFile: String? = nil) {
    if error.code == EIO || error.code == EFBIG, let dataFile, let limit = LMDBError.fileSizeLimit() {
      var status = stat()
      if stat(dataFile, &status) == 0, UInt64(max(status.st_size, 0)) >= limit {
        self = .lmdbFailure(.fileSizeLimit(bytes: limit))
        return
      }
    }
    self =
      error.isOutOfSpace ? .diskFull(store: .lmdb, detail: systemMessage(error.code)) : .lmdbFailure(error.failure)
  }
}

extension LMDBError {
  /// The process's file-size limit in bytes, if it has one: LMDB's write cut
  /// short there fails as EIO (EFBIG when nothing could be written; the
  /// signal that would kill the process is ignored, `setUpProcess`).
  static func fileSizeLimit() -> UInt64? {
    var limit = rlimit()
    // RLIM_INFINITY, which Swift does not import, is all ones.
    guard getrlimit(Int32(RLIMIT_FSIZE.rawValue), &limit) == 0, limit.rlim_cur != rlim_t.max else { return nil }
    return UInt64(limit.rlim_cur)
  }
}

/// Thrown by a read without a reader slot when a writer committed during it.
package struct ConcurrentCommit: Error, Sendable {}

/// Throws unless `code` is 0.
@inline(__always)
func check(_ code: Int32, _ function: @autoclosure () -> String) throws(LMDBError) {
  if code != 0 { throw LMDBError(code, function()) }
}
