#if canImport(Glibc)
  import Glibc
#endif

/// How many connections the server holds at once, from the file
/// descriptors it may open: never so many that `accept` or the store runs
/// out of them (a server out of descriptors cannot even refuse politely).
package struct ConnectionLimits: Equatable, Sendable {
  /// Connections at once, all clients together.
  package var total: Int
  /// Connections at once from one client address.
  package var perAddress: Int

  /// Descriptors kept for everything but connections: the store's files
  /// and sockets, pipes, the listening socket, standard streams.
  static let reserved = 64
  static let most = 4096

  /// Raises the soft limit on open descriptors to the hard one (what a
  /// shell's `ulimit -n` leaves low by default), then derives the limits:
  /// two descriptors per connection (its socket, and a database connection
  /// a streamed answer may hold on PostgreSQL), half of them for any one
  /// address.
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
    total = min(max((descriptors - Self.reserved) / 2, 4), Self.most)
    perAddress = max(total / 2, 2)
  }

  package init(total: Int, perAddress: Int) {
    self.total = total
    self.perAddress = perAddress
  }
}
