import Synchronization

#if canImport(Glibc)
  import Glibc
#endif

/// How many connections the server holds at once, from the file
/// descriptors it may open: never so many that `accept` or the store runs
/// out of them (a server out of descriptors cannot even refuse politely).
package struct ConnectionLimits: Equatable, Sendable {
  /// Connections at once, all clients together.
  package var total: Int
  /// Connections at once from one client address: an eighth of the total,
  /// so that a few busy addresses cannot lock out the rest.
  package var perAddress: Int

  /// Descriptors kept for everything but connections: the store's files
  /// and sockets, pipes, epoll and eventfds, the listening socket, the
  /// standard streams, and the one kept free to refuse with when out.
  static let reserved = 64
  static let most = 16_384

  /// Raises the soft limit on open descriptors to the hard one (what a
  /// shell's `ulimit -n` leaves low by default), then derives the limits:
  /// one descriptor per connection (a streamed answer holds no database
  /// connection between its pieces).
  package static func fromDescriptorLimit() -> ConnectionLimits {
    var limit = rlimit()
    if getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit) == 0, limit.rlim_cur < limit.rlim_max {
      var raised = limit
      raised.rlim_cur = limit.rlim_max
      if setrlimit(Int32(RLIMIT_NOFILE.rawValue), &raised) == 0 { limit = raised }
    }
    return ConnectionLimits(descriptors: Int(clamping: limit.rlim_cur))
  }

  package init(descriptors: Int) {
    total = min(max(descriptors - Self.reserved, 4), Self.most)
    perAddress = max(total / 8, 2)
  }

  package init(total: Int, perAddress: Int) {
    self.total = total
    self.perAddress = perAddress
  }
}

/// The connections open now, all together and by client address.
final class ConnectionCount: Sendable {
  enum Admission { case admitted, full, tooManyFromAddress }

  private struct State {
    var total = 0
    var perAddress: [[UInt8]: Int] = [:]
  }

  let limits: ConnectionLimits
  private let state = Mutex(State())

  init(limits: ConnectionLimits) { self.limits = limits }

  var total: Int { state.withLock { $0.total } }

  /// Counts a new connection in, when the limits let it.
  func admit(_ address: [UInt8]) -> Admission {
    state.withLock { state in
      guard state.total < limits.total else { return .full }
      guard state.perAddress[address, default: 0] < limits.perAddress else { return .tooManyFromAddress }
      state.total += 1
      state.perAddress[address, default: 0] += 1
      return .admitted
    }
  }

  func remove(_ address: [UInt8]) {
    state.withLock { state in
      state.total -= 1
      let left = (state.perAddress[address] ?? 1) - 1
      state.perAddress[address] = left > 0 ? left : nil
    }
  }
}
