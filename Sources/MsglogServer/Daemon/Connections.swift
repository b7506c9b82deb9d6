import Msglog
import Synchronization

#if canImport(Glibc)
  import Glibc
#endif

/// The connections open now, by socket: from whom, and by when their
/// request's headers must have arrived. Shared by the acceptor (which
/// adds them and enforces the deadline) and libmicrohttpd's threads (which
/// report headers received, requests done and connections closed).
final class Connections: Sendable {
  struct Entry {
    /// The client's address, without its port.
    var address: [UInt8]
    /// When the current request's headers are due; nil once they arrived.
    var headersDue: Deadline?
  }

  private struct State {
    var entries: [Int32: Entry] = [:]
    var perAddress: [[UInt8]: Int] = [:]
  }

  private let state = Mutex(State())
  let headerDeadline: Double

  init(headerDeadline: Double) { self.headerDeadline = headerDeadline }

  var count: Int { state.withLock { $0.entries.count } }

  func count(from address: [UInt8]) -> Int { state.withLock { $0.perAddress[address] ?? 0 } }

  /// A new connection: its headers are due `headerDeadline` from now.
  func add(_ fd: Int32, address: [UInt8]) {
    state.withLock { state in
      state.entries[fd] = Entry(address: address, headersDue: .after(seconds: headerDeadline))
      state.perAddress[address, default: 0] += 1
    }
  }

  /// A connection gone (closed here, or by libmicrohttpd).
  func remove(_ fd: Int32) {
    state.withLock { state in
      guard let entry = state.entries.removeValue(forKey: fd) else { return }
      let left = (state.perAddress[entry.address] ?? 1) - 1
      state.perAddress[entry.address] = left > 0 ? left : nil
    }
  }

  /// A request's headers arrived: no deadline until the next request.
  func headersArrived(_ fd: Int32) {
    state.withLock { $0.entries[fd]?.headersDue = nil }
  }

  /// A request answered: on a connection kept alive, the next request's
  /// headers are due `headerDeadline` from now.
  func requestDone(_ fd: Int32) {
    state.withLock { state in
      if state.entries[fd] != nil { state.entries[fd]!.headersDue = .after(seconds: headerDeadline) }
    }
  }

  /// Ends every connection whose headers are overdue, with `end` (called
  /// under the lock, so that the socket cannot have been closed and its
  /// number reused meanwhile: libmicrohttpd reports a close before it
  /// closes); returns the next deadline.
  func endOverdue(_ end: (Int32) -> Void) -> Deadline? {
    state.withLock { state in
      let now = Deadline.now()
      var next: Deadline? = nil
      for (fd, entry) in state.entries {
        guard let due = entry.headersDue else { continue }
        if due <= now {
          end(fd)
          state.entries[fd]!.headersDue = nil
        } else if next == nil || due < next! {
          next = due
        }
      }
      return next
    }
  }
}
