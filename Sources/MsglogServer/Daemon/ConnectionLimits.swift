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

/// The connections open now, all together and by client address. A
/// connection from a `--trusted-proxy` carries many clients' requests one
/// after the other: it counts in the total from its start, and under a
/// client's address only while it carries that client's request
/// (`attribute`, `release`), so the per-address limit is each client's
/// behind the proxy, not the proxy's.
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

  /// Counts a new connection in, when the limits let it: under `address`,
  /// or under no address yet (a proxy's).
  func admit(_ address: [UInt8]?) -> Admission {
    state.withLock { state in
      guard state.total < limits.total else { return .full }
      if let address {
        guard state.perAddress[address, default: 0] < limits.perAddress else { return .tooManyFromAddress }
        state.perAddress[address, default: 0] += 1
      }
      state.total += 1
      return .admitted
    }
  }

  /// Counts a proxy's connection under the client whose request it now
  /// carries, when that client has room.
  func attribute(_ address: [UInt8]) -> Bool {
    state.withLock { state in
      guard state.perAddress[address, default: 0] < limits.perAddress else { return false }
      state.perAddress[address, default: 0] += 1
      return true
    }
  }

  /// The client's request is over: the connection counts under no address.
  func release(_ address: [UInt8]) {
    state.withLock { state in Self.decrement(address, in: &state) }
  }

  /// The connection closed; `address` is the one it counted under, if any.
  func remove(_ address: [UInt8]?) {
    state.withLock { state in
      state.total -= 1
      if let address { Self.decrement(address, in: &state) }
    }
  }

  private static func decrement(_ address: [UInt8], in state: inout State) {
    let left = (state.perAddress[address] ?? 1) - 1
    state.perAddress[address] = left > 0 ? left : nil
  }
}
