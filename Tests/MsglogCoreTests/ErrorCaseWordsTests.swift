import Glibc
import MsglogCore
import Testing

/// The failures that were one case of words (`storage(String)`) are cases
/// with their data now, a program can switch on them — and the words each
/// prints are the very ones it printed before.
@Suite struct ErrorCaseWordsTests {
  @Test func eachSaysWhatItSaidBefore() {
    let cases: [(MsglogError, String)] = [
      (.systemRefused(.signalHandling, errno: EMFILE), "cannot set up signal handling: too many open files"),
      (
        .systemRefused(.watch(location: "/tmp/x.lmdb"), errno: ENOSPC),
        "cannot watch /tmp/x.lmdb: no space left on device"
      ),
      (
        // inotify_init1's EMFILE: mostly the user's inotify instances (an app's 130 live lists).
        .systemRefused(.watch(location: "/tmp/x.lmdb"), errno: EMFILE),
        "cannot watch /tmp/x.lmdb: too many open files, or this user's inotify instances are all in use "
          + "(fs.inotify.max_user_instances, 128 by default: each live list or follower holds one)"
      ),
      (
        .systemRefused(.syncLock(location: "/tmp/r.lmdb"), errno: EBADF),
        "cannot lock /tmp/r.lmdb for a sync: bad file descriptor"
      ),
      (.systemRefused(.followerThread, errno: nil), "cannot follow: no thread could be started"),
      (.systemRefused(.followerPipe, errno: nil), "cannot follow: no pipe could be made"),
      (.systemRefused(.wakePipe, errno: EMFILE), "cannot make a pipe: too many open files"),
      (.cannotFollow(location: "(in memory)"), "this store cannot be followed"),
      (
        .followedDatabaseDisplaced(location: "/tmp/a.lmdb"),
        "the database at /tmp/a.lmdb was removed or replaced while it was followed"
      ),
      (
        .writtenDatabaseDisplaced(location: "/tmp/a.lmdb"),
        "the database at /tmp/a.lmdb was removed or replaced after this log opened it: the write was not kept"
      ),
      (
        .rebuildDidNotVerify(problem: "table ids: 3 rows, 4 expected"),
        "the rebuild did not verify: table ids: 3 rows, 4 expected"
      ),
      (.foreignFailure(type: "SomeError", words: "SomeError()"), "SomeError()"),
      (.replicaMovedDuringPull, "the replica's head moved while a page of its remote was read"),
      (.changeDoesNotApply(change: 7), "change 7 does not apply"),
      (
        .unacceptableRecord(remote: "http://h", seq: 9, reason: .eventDoesNotFit(seq: 9, reason: "its index is not 3")),
        "http://h sent a record this replica cannot accept, at seq 9: its index is not 3"
      ),
      // LMDB's failures, once `storeFailure(store: .lmdb, detail:)` in words.
      (.lmdbFailure(.damagedPages), "database error: the database file is damaged (LMDB cannot read its pages)"),
      (
        .lmdbFailure(.incompatibleVersion),
        "database error: the database was written by an incompatible version of LMDB"
      ),
      (.lmdbFailure(.tooManyReaders), "database error: too many processes are reading the database at once"),
      (.lmdbFailure(.couldNotGrow), "database error: the database could not grow"),
      (
        .lmdbFailure(.resourceExhausted(code: -30788)),
        "database error: the database ran out of an internal resource (-30788)"
      ),
      (.lmdbFailure(.internalError(code: -30782)), "database error: the database reported an internal error (-30782)"),
      (.lmdbFailure(.system(errno: EIO)), "database error: input/output error"),
    ]
    for (error, words) in cases {
      #expect(error.description == words)
      #expect(error.category == .unavailable || error.category == .incompatible, "\(error)")
    }
  }
}
