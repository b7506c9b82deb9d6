import Msglog

#if canImport(Glibc)
  import Glibc
#endif

/// The listening socket, on the first event loop: accepts what the limits
/// let in and deals the connections to the loops in turn. Past the limits
/// a connection is answered 503 and closed — never left to time out, never
/// reset; out of descriptors, the one kept free for it lets the server
/// accept the connection to refuse it, and each such case is logged.
final class Listener: @unchecked Sendable {  // the accepting loop's thread
  private(set) var fd: Int32
  let port: UInt16
  private let loops: [EventLoop]
  private var nextLoop = 0
  /// Kept open to be closed when out of descriptors, to accept and refuse.
  private var spare: Int32 = -1
  /// Accepting paused (out of resources with nothing to refuse with) until then.
  private var pausedUntil: Deadline? = nil
  private var registered = false
  private var core: ServerCore { loops[0].core }

  init(listen address: ListenAddress, loops: [EventLoop]) throws(ServerError) {
    self.loops = loops
    (fd, port) = try Self.listen(on: address)
    spare = open("/dev/null", O_RDONLY | O_CLOEXEC)
  }

  deinit { close() }

  /// Starts accepting on the first loop (from its thread).
  func start() {
    loops[0].register(fd, EventLoop.readable)
    registered = true
  }

  private static func listen(on address: ListenAddress) throws(ServerError) -> (Int32, UInt16) {
    let failure = { (what: String) -> ServerError in
      ServerError("cannot listen on \(address.text): \(what): \(String(cString: strerror(errno)))")
    }
    let family = address.withSockaddr { sockaddr, _ in Int32(sockaddr.pointee.sa_family) }
    let fd = socket(
      family, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue) | Int32(SOCK_NONBLOCK.rawValue), 0)
    guard fd >= 0 else { throw failure("socket") }
    var one: Int32 = 1
    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, socklen_t(MemoryLayout<Int32>.size))
    if family == AF_INET6 {
      setsockopt(fd, Int32(IPPROTO_IPV6), IPV6_V6ONLY, &one, socklen_t(MemoryLayout<Int32>.size))
    }
    let bound = address.withSockaddr { sockaddr, isIPv6 in
      bind(fd, sockaddr, socklen_t(isIPv6 ? MemoryLayout<sockaddr_in6>.size : MemoryLayout<sockaddr_in>.size))
    }
    guard bound == 0 else {
      let error = failure("bind")
      Glibc.close(fd)
      throw error
    }
    guard Glibc.listen(fd, SOMAXCONN) == 0 else {
      let error = failure("listen")
      Glibc.close(fd)
      throw error
    }
    var storage = sockaddr_storage()
    var length = socklen_t(MemoryLayout<sockaddr_storage>.size)
    let port = withUnsafeMutablePointer(to: &storage) { pointer in
      _ = pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
      return pointer.withMemoryRebound(to: sockaddr_in.self, capacity: 1) { UInt16(bigEndian: $0.pointee.sin_port) }
    }
    return (fd, port)
  }

  /// Accepts what is queued (a bounded number at a time, so the loop's own
  /// connections are not starved by a flood).
  func acceptAll() {
    for _ in 0..<256 {
      var storage = sockaddr_storage()
      var length = socklen_t(MemoryLayout<sockaddr_storage>.size)
      let client = withUnsafeMutablePointer(to: &storage) { pointer in
        pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) {
          accept(fd, $0, &length)
        }
      }
      guard client >= 0 else {
        switch errno {
        case EAGAIN, EWOULDBLOCK, ECONNABORTED, EINTR: return
        case EMFILE, ENFILE: return refuseWithSpare()
        default:
          // ENOBUFS, ENOMEM: wait a moment, without spinning.
          core.warnings.warn("accept", "cannot accept a connection: \(String(cString: strerror(errno)))")
          return pause()
        }
      }
      _ = fcntl(client, F_SETFD, FD_CLOEXEC)
      _ = fcntl(client, F_SETFL, O_NONBLOCK)
      var one: Int32 = 1
      setsockopt(client, Int32(IPPROTO_TCP), TCP_NODELAY, &one, socklen_t(MemoryLayout<Int32>.size))
      let address = Self.host(of: storage)
      let loop = loops[nextLoop]
      nextLoop = (nextLoop + 1) % loops.count
      // A proxy's connection counts under each client it carries, as their requests come.
      switch core.count.admit(core.proxies.trusts(address) ? nil : address) {
      case .admitted:
        loop.adopt(client, address: address)
      case .full:
        core.warnings.warn("connections", "\(core.count.limits.total) connections are open: answering 503")
        loop.adopt(
          client, address: address,
          refusal: HTTPError(status: 503, message: "the server has too many connections now; retry shortly"))
      case .tooManyFromAddress:
        core.warnings.warn(
          "address", "\(core.count.limits.perAddress) connections from one address are open: answering 503")
        loop.adopt(
          client, address: address,
          refusal: HTTPError(
            status: 503, message: "too many connections from your address; close some and retry"))
      }
    }
  }

  /// Out of descriptors: the spare one makes room to accept a connection,
  /// answer it 503 and close it, then is taken again.
  private func refuseWithSpare() {
    core.warnings.warn("descriptors", "out of file descriptors: answering 503")
    guard spare >= 0 else { return pause() }
    Glibc.close(spare)
    spare = -1
    let client = accept(fd, nil, nil)
    if client >= 0 {
      let response = ResponseHead.encode(
        status: 503, contentType: "application/json", headers: [],
        delimiting: .length(Self.outOfDescriptors.count), close: true) + Self.outOfDescriptors
      _ = response.withUnsafeBytes { send(client, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL | MSG_DONTWAIT)) }
      shutdown(client, Int32(SHUT_WR))
      Glibc.close(client)
    }
    spare = open("/dev/null", O_RDONLY | O_CLOEXEC)
    if spare < 0 { pause() }
  }

  private static let outOfDescriptors = Array(
    #"{"error":"the server is out of file descriptors now; retry shortly"}"#.utf8)

  private func pause() {
    guard registered else { return }
    loops[0].unregister(fd)
    registered = false
    pausedUntil = .after(seconds: 0.25)
  }

  func tick(_ now: Deadline) {
    if let pausedUntil, pausedUntil <= now {
      self.pausedUntil = nil
      if spare < 0 { spare = open("/dev/null", O_RDONLY | O_CLOEXEC) }
      loops[0].register(fd, EventLoop.readable)
      registered = true
    }
  }

  func close() {
    if registered { loops[0].unregister(fd) }
    registered = false
    pausedUntil = nil
    if fd >= 0 { Glibc.close(fd) }
    fd = -1
    if spare >= 0 { Glibc.close(spare) }
    spare = -1
  }

  /// The client's address without its port.
  private static func host(of storage: sockaddr_storage) -> [UInt8] {
    let family = Int32(storage.ss_family)
    return withUnsafeBytes(of: storage) { raw in
      family == AF_INET6 ? Array(raw[8..<24]) : Array(raw[4..<8])
    }
  }
}
