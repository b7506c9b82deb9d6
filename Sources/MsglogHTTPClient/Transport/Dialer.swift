import MsglogTLS

#if canImport(Glibc)
  import Glibc
#endif

/// Opens a TCP connection to a URL's host: its addresses from
/// `getaddrinfo` (IPv6 and IPv4, in the resolver's order), each tried in
/// turn until one accepts, all within one connect timeout.
enum Dialer {
  static func connect(to url: HTTPURL, timeout: Double, cancellation: Cancellation) throws -> Socket {
    let origin = url.origin
    if cancellation.isRaised { throw HTTPClientError.cancelled(origin: origin) }
    let deadline = Deadline(in: timeout)
    var hints = addrinfo()
    hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
    hints.ai_protocol = Int32(IPPROTO_TCP)
    hints.ai_flags = AI_NUMERICSERV
    switch url.host {
    case .name: hints.ai_family = AF_UNSPEC
    case .ipv4: (hints.ai_family, hints.ai_flags) = (AF_INET, hints.ai_flags | AI_NUMERICHOST)
    case .ipv6: (hints.ai_family, hints.ai_flags) = (AF_INET6, hints.ai_flags | AI_NUMERICHOST)
    }
    // Blocking, and not cancellable: the resolver has its own timeouts
    // (resolv.conf), and a literal address or /etc/hosts name is at once.
    var list: UnsafeMutablePointer<addrinfo>? = nil
    let resolved = getaddrinfo(url.hostForLookup, String(url.port), &hints, &list)
    guard resolved == 0, let first = list else {
      let reason =
        resolved == EAI_SYSTEM
        ? systemMessage(errno)
        : resolved == EAI_NONAME
          ? "the name \(url.hostForLookup) is not known"
          : lowercasedSentence(String(cString: gai_strerror(resolved)))
      throw HTTPClientError.unreachable(origin: origin, reason: reason)
    }
    defer { freeaddrinfo(list) }
    var lastFailure = HTTPClientError.unreachable(origin: origin, reason: "the name has no address")
    var next: UnsafeMutablePointer<addrinfo>? = first
    while let address = next {
      next = address.pointee.ai_next
      let descriptor = socket(
        address.pointee.ai_family,
        Int32(SOCK_STREAM.rawValue) | Int32(SOCK_NONBLOCK.rawValue)
          | Int32(SOCK_CLOEXEC.rawValue), 0)
      guard descriptor >= 0 else {
        lastFailure = .unreachable(origin: origin, reason: systemMessage(errno))
        continue
      }
      let socket = Socket(descriptor: descriptor, origin: origin, cancellation: cancellation)
      if Glibc.connect(descriptor, address.pointee.ai_addr, address.pointee.ai_addrlen) != 0 {
        guard errno == EINPROGRESS else {
          lastFailure = .unreachable(origin: origin, reason: systemMessage(errno))
          continue
        }
        try socket.wait(for: Int16(POLLOUT), until: deadline, phase: .connect, seconds: timeout)
        var code: Int32 = 0
        var size = socklen_t(MemoryLayout<Int32>.size)
        getsockopt(descriptor, SOL_SOCKET, SO_ERROR, &code, &size)
        guard code == 0 else {
          lastFailure = .unreachable(origin: origin, reason: systemMessage(code))
          continue
        }
      }
      // A request goes out in one write and waits for its answer: Nagle's
      // wait for more to send would only delay it.
      var one: Int32 = 1
      setsockopt(descriptor, Int32(IPPROTO_TCP), TCP_NODELAY, &one, socklen_t(MemoryLayout<Int32>.size))
      return socket
    }
    throw lastFailure
  }
}
