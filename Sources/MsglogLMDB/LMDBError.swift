import CLMDB

#if canImport(Glibc)
  import Glibc
#endif

/// A failed LMDB call: the C return code and the function that returned it.
public struct LMDBError: Error, Equatable, CustomStringConvertible, Sendable {
  public var code: Int32
  public var function: String

  public init(_ code: Int32, _ function: String) {
    self.code = code
    self.function = function
  }

  public static let notFound: Int32 = MDB_NOTFOUND
  public static let keyExists: Int32 = MDB_KEYEXIST
  public static let mapFull: Int32 = MDB_MAP_FULL
  public static let mapResized: Int32 = MDB_MAP_RESIZED
  public static let invalid: Int32 = MDB_INVALID
  public static let versionMismatch: Int32 = MDB_VERSION_MISMATCH
  public static let corrupted: Int32 = MDB_CORRUPTED
  public static let readersFull: Int32 = MDB_READERS_FULL

  /// The file system refused to give the database more room.
  public var isOutOfSpace: Bool { code == ENOSPC || code == EDQUOT || code == EFBIG }

  /// `mdb_strerror`'s text (which covers errno values too), naming the call.
  public var description: String {
    "\(function) failed: \(String(cString: mdb_strerror(code)))"
  }
}

/// Throws unless `code` is 0.
@inline(__always)
func check(_ code: Int32, _ function: @autoclosure () -> String) throws(LMDBError) {
  if code != 0 { throw LMDBError(code, function()) }
}
