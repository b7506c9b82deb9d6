import CLMDB
import Glibc
import MsglogCore
import Testing

@testable import MsglogLMDB

/// LMDB's return codes become what they mean (`LMDBFailure`), never LMDB's
/// function or constant names, and out of room stays the disk being full.
@Suite struct LMDBFailureTests {
  @Test func eachCodeIsWhatItMeans() {
    let cases: [(Int32, MsglogError)] = [
      (MDB_CORRUPTED, .lmdbFailure(.damagedPages)),
      (MDB_PAGE_NOTFOUND, .lmdbFailure(.damagedPages)),
      (MDB_INVALID, .lmdbFailure(.damagedPages)),
      (MDB_VERSION_MISMATCH, .lmdbFailure(.incompatibleVersion)),
      (MDB_READERS_FULL, .lmdbFailure(.tooManyReaders)),
      (MDB_MAP_FULL, .lmdbFailure(.couldNotGrow)),
      (MDB_TXN_FULL, .lmdbFailure(.resourceExhausted(code: MDB_TXN_FULL))),
      (MDB_BAD_TXN, .lmdbFailure(.internalError(code: MDB_BAD_TXN))),
      (EIO, .lmdbFailure(.system(errno: EIO))),
      (ENOSPC, .diskFull(store: .lmdb, detail: "no space left on device")),
    ]
    for (code, error) in cases {
      let made = MsglogError(LMDBError(code, "mdb_txn_commit"))
      #expect(made == error)
      #expect(!made.description.contains("mdb_"), "\(made)")
      #expect(!made.description.contains("MDB_"), "\(made)")
    }
  }
}
