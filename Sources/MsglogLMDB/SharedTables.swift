import MsglogCore
import Synchronization

#if canImport(Glibc)
  import Glibc
#endif

/// The databases this process has open, one environment each, shared by
/// every `LMDBStore` of the same data file.
///
/// LMDB's locks on `lock.mdb` are POSIX record locks, which belong to the
/// process: closing any descriptor of that file drops them all. A second
/// environment of one file in one process — two `EventLog`s of one path,
/// an app's view and its background task — would, once closed, leave the
/// first one's readers unknown to other processes, whose writers may then
/// reuse the pages under them; LMDB's documentation forbids it. So a store
/// opens its tables here: the ones already open for that file when there
/// are, else its own, kept for the next. An environment being closed is
/// waited for (`Environment.deinit` says when it is), so that its close
/// cannot drop the locks of the one opened after it.
enum SharedTables {
  private enum Slot {
    /// Being opened by one store: the others wait for it.
    case opening
    /// Open; `tables` is nil once its last store let go of it and its
    /// environment is closing.
    case open(Held)
  }

  private final class Held: @unchecked Sendable {
    weak var tables: LMDBTables?
    let opening: Int
    init(_ tables: LMDBTables) {
      self.tables = tables
      opening = tables.environment.opening
    }
  }

  private enum Found {
    case shared(LMDBTables)
    case wait
    case mine
  }

  private static let slots = Mutex<[FileIdentity: Slot]>([:])

  /// The tables of the database at `path` (whose data file exists) that
  /// this process has open, or those `open` makes, kept for the next
  /// store. A store that would write is refused (`MsglogError.readOnly`)
  /// tables opened for reading only, which cannot be opened twice.
  ///
  /// No strong reference is dropped and nothing is opened under the lock:
  /// a closing environment takes it (`forget`).
  static func tables(
    at path: String, writer: Bool, shown: String, _ open: () throws -> LMDBTables
  ) throws -> LMDBTables {
    while true {
      // A data file that cannot be looked at is opened as it is: LMDB
      // will say why.
      guard let key = FileIdentity(path: path + "/data.mdb") else { return try open() }
      let found = slots.withLock { slots -> Found in
        switch slots[key] {
        case nil:
          slots[key] = .opening
          return .mine
        case .opening: return .wait
        case .open(let held): return held.tables.map(Found.shared) ?? .wait
        }
      }
      switch found {
      case .shared(let tables):
        if writer && tables.environment.isReadOnly {
          throw MsglogError.readOnly(
            location: shown, store: .lmdb,
            reason: "this process opened it for reading only, and LMDB allows one opening of a database per process")
        }
        return tables
      case .wait:
        usleep(200)
      case .mine:
        let tables: LMDBTables
        do {
          tables = try open()
        } catch {
          slots.withLock { _ = $0.removeValue(forKey: key) }
          throw error
        }
        let held = Held(tables)
        slots.withLock { slots in
          slots[key] = nil
          // Under the identity of the file it opened (the one at the path
          // may have been replaced meanwhile).
          slots[tables.environment.dataFileIdentity ?? key] = .open(held)
        }
        return tables
      }
    }
  }

  /// Called by an environment once it is closed: a store waiting to open
  /// its file may now.
  static func forget(opening: Int) {
    slots.withLock { slots in
      guard
        let key = slots.first(where: { if case .open(let held) = $0.value { held.opening == opening } else { false } })?
          .key
      else { return }
      slots[key] = nil
    }
  }
}
