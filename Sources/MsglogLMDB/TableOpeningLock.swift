import CLMDB
import Synchronization

#if canImport(Glibc)
  import Glibc
#endif

/// One environment's lock on opening tables (`Transaction.openTable`),
/// and what the transactions that held it left open.
///
/// LMDB's rule for `mdb_dbi_open`: never from two transactions of a
/// process at once, and a transaction that called it must end before
/// another may call it — a handle opened in a transaction is that
/// transaction's until it commits (an abort closes it), and LMDB gives a
/// new table the lowest free slot a transaction knows of, which another
/// transaction's table may have taken meanwhile.
package final class TableOpeningLock: @unchecked Sendable {  // state guarded by `mutex`, `published` by its own
  private let mutex: UnsafeMutablePointer<pthread_mutex_t> = {
    let mutex = UnsafeMutablePointer<pthread_mutex_t>.allocate(capacity: 1)
    // Error-checking: a thread that asks again while it holds it (a
    // transaction inside another's, opening tables) is a bug, said at once
    // rather than a hang.
    var attributes = pthread_mutexattr_t()
    pthread_mutexattr_init(&attributes)
    pthread_mutexattr_settype(&attributes, Int32(PTHREAD_MUTEX_ERRORCHECK))
    pthread_mutex_init(mutex, &attributes)
    pthread_mutexattr_destroy(&attributes)
    return mutex
  }()

  /// The tables opened when first needed by committed transactions, by
  /// name: published while their opener still holds the lock, read by
  /// every transaction without it.
  let published = Mutex<[String: Database]>([:])
  /// The slots of every table a committed transaction of this process
  /// opened (less those dropped); read and written under the lock.
  var committedSlots: Set<MDB_dbi> = []

  deinit {
    pthread_mutex_destroy(mutex)
    mutex.deallocate()
  }

  func lock() {
    let rc = pthread_mutex_lock(mutex)
    precondition(rc == 0, "a transaction opening tables inside another that holds the lock")
  }

  func unlock() { pthread_mutex_unlock(mutex) }

  /// Waits until no transaction holds it: a table another one opened is
  /// then committed (or closed).
  func waitForOpeners() {
    lock()
    unlock()
  }
}

/// A transaction began before another opened a table it needs: run it
/// again in a new one (`LMDBTables.read`, `write`), once the opener is done.
package struct TableOpenedSince: Error {}
