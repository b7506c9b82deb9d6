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
  /// opened (less those dropped), one bit each; read and written under the
  /// lock.
  var committedSlots = TableSlots()

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

/// A set of LMDB table slots, one bit each: an environment has at most
/// `LMDBTables.maxDatabases` tables and two of LMDB's own. (A `Set` here
/// cost each process 150,000 instructions, one `append` +7 %.)
package struct TableSlots {
  private var bits: UInt64 = 0

  var isEmpty: Bool { bits == 0 }

  mutating func insert(_ slot: MDB_dbi) {
    precondition(slot < 64, "table slot \(slot): at most 64 tables")
    bits |= 1 << UInt64(slot)
  }

  mutating func remove(_ slot: MDB_dbi) {
    if slot < 64 { bits &= ~(1 << UInt64(slot)) }
  }

  mutating func formUnion(_ other: TableSlots) { bits |= other.bits }

  /// Whether `body` holds for every slot.
  func allSatisfy(_ body: (MDB_dbi) -> Bool) -> Bool {
    var rest = bits
    while rest != 0 {
      guard body(MDB_dbi(rest.trailingZeroBitCount)) else { return false }
      rest &= rest - 1
    }
    return true
  }
}
