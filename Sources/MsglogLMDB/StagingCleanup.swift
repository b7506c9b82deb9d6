import Synchronization

#if canImport(Glibc)
  import Glibc
#endif

/// The staging directories this process is building (a first write, a
/// clone, a backup), so that a signal that ends it removes them.
///
/// A signal handler may make async-signal-safe calls only: no allocation,
/// no lock. So each directory is recorded beforehand as C strings —
/// `DIR/data.mdb`, `DIR/lock.mdb`, `DIR` — in a slot read with an atomic
/// load, and the handler unlinks and rmdirs them. A slot's strings are
/// never freed (a handler on another thread may be reading them as the
/// slot is let go): a process builds a handful of databases in its life,
/// a few hundred bytes each.
package enum StagingCleanup {
  /// Directories built at once by one process; past that, one is not
  /// recorded (a signal then leaves it for the next first write to sweep).
  static let capacity = 16

  final class Slots: Sendable {
    /// The address of a slot's strings, or 0.
    let addresses = InlineArray<16, Atomic<UInt>> { _ in Atomic(0) }
  }

  private static let slots = Slots()

  /// Records `directory` for removal if a signal ends the process; returns
  /// the slot to pass to `forget` once the directory is gone or renamed.
  package static func remember(_ directory: String) -> Int? {
    var bytes: [UInt8] = []
    for name in [directory + "/data.mdb", directory + "/lock.mdb", directory] {
      bytes += name.utf8
      bytes.append(0)
    }
    let strings = UnsafeMutablePointer<UInt8>.allocate(capacity: bytes.count)
    strings.initialize(from: bytes, count: bytes.count)
    let address = UInt(bitPattern: strings)
    for slot in 0..<capacity {
      if slots.addresses[slot].compareExchange(expected: 0, desired: address, ordering: .acquiringAndReleasing).exchanged {
        return slot
      }
    }
    strings.deallocate()
    return nil
  }

  /// The directory is gone (or is the database now): a signal leaves it be.
  package static func forget(_ slot: Int?) {
    guard let slot else { return }
    slots.addresses[slot].store(0, ordering: .releasing)
  }

  /// Removes every recorded directory and the files LMDB makes in it.
  /// Async-signal-safe: atomic loads, unlink(2), rmdir(2).
  package static func removeAll() {
    var slot = 0
    while slot < capacity {
      let address = slots.addresses[slot].load(ordering: .acquiring)
      slot += 1
      guard var name = UnsafePointer<CChar>(bitPattern: address) else { continue }
      unlink(name)
      while name.pointee != 0 { name += 1 }
      name += 1
      unlink(name)
      while name.pointee != 0 { name += 1 }
      name += 1
      rmdir(name)
    }
  }

  /// Makes SIGINT, SIGTERM and SIGHUP remove the staging directories, then
  /// end the process as they would have. A signal the process was started
  /// with ignored (`nohup`, a background job) stays ignored, and one that
  /// already has a handler keeps it.
  package static func removeOnTerminatingSignals() {
    _ = slots  // made now: a handler must not be the first to touch it
    for signal in [SIGINT, SIGTERM, SIGHUP] {
      var current = sigaction()
      guard sigaction(signal, nil, &current) == 0,
        current.__sigaction_handler.sa_handler.map({ unsafeBitCast($0, to: Int.self) }) ?? 0 == 0
      else { continue }
      var action = sigaction()
      action.__sigaction_handler.sa_handler = { signal in
        StagingCleanup.removeAll()
        // Blocked until the handler returns, then delivered as if never caught.
        Glibc.signal(signal, SIG_DFL)
        raise(signal)
      }
      sigaction(signal, &action, nil)
    }
  }
}
