import CMicroHTTPD
import Msglog
import MsglogWire

#if canImport(Glibc)
  import Glibc
#endif

/// Accepts connections and hands them to libmicrohttpd, deciding how many
/// it takes and from whom — which libmicrohttpd's own listener, out of
/// descriptors, does by spinning a core:
///
/// - at `limits.total` connections it stops accepting (new ones wait in the
///   kernel's queue) until one closes; out of descriptors (`EMFILE`) it
///   pauses accepting a quarter of a second, never retrying in a loop;
/// - past `limits.perAddress` from one address, a connection gets a 503;
/// - a connection whose request line is malformed gets a 400 (libmicrohttpd
///   would close it without a word); one with a well-formed line goes to
///   libmicrohttpd;
/// - a connection whose request's headers have not all arrived
///   `headerDeadline` after it opened (or after its previous answer) is
///   ended: trickling headers a byte at a time cannot hold one for ever.
final class Acceptor: @unchecked Sendable {  // `waiting` and `pausedUntil` belong to the accepting thread
  let listener: Int32
  let port: UInt16
  let limits: ConnectionLimits
  let connections: Connections
  private var daemon: OpaquePointer? = nil
  /// Readable when the acceptor should look again: a connection closed, or it must stop.
  private let wake: (read: Int32, write: Int32)
  private let stopping = Guarded((stop: false, ended: false))
  /// Connections whose request line has not all arrived: their address, and
  /// when to look again at one that sent part of it.
  private var waiting: [Int32: (address: [UInt8], socketAddress: [UInt8], lookAgain: Deadline?)] = [:]
  private var pausedUntil: Deadline? = nil

  init(listen address: ListenAddress, limits: ConnectionLimits, headerDeadline: Double) throws(ServerError) {
    self.limits = limits
    connections = Connections(headerDeadline: headerDeadline)
    (listener, port) = try Self.listen(on: address)
    var ends: [Int32] = [-1, -1]
    guard pipe(&ends) == 0 else {
      close(listener)
      throw ServerError("cannot make a pipe: \(String(cString: strerror(errno)))")
    }
    for fd in ends {
      _ = fcntl(fd, F_SETFD, FD_CLOEXEC)
      _ = fcntl(fd, F_SETFL, O_NONBLOCK)
    }
    wake = (ends[0], ends[1])
  }

  deinit {
    close(listener)
    close(wake.read)
    close(wake.write)
  }

  /// A listening socket of our own (libmicrohttpd gets none).
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
      close(fd)
      throw error
    }
    guard Glibc.listen(fd, SOMAXCONN) == 0 else {
      let error = failure("listen")
      close(fd)
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

  /// Starts accepting for `daemon`, on a thread of its own.
  func start(handingTo daemon: OpaquePointer) throws(ServerError) {
    self.daemon = daemon
    stopping.update { $0 = (false, false) }
    guard
      startThread({ [self] in
        run()
        stopping.update { $0.ended = true }
      })
    else {
      throw ServerError("cannot start a thread: \(String(cString: strerror(errno)))")
    }
  }

  /// Stops accepting and closes the connections not yet handed over;
  /// returns once the accepting thread has ended.
  func stop() {
    stopping.update { $0.stop = true }
    poke()
    stopping.wait(until: { $0.ended }) { _, _ in }
  }

  /// Wakes the accepting thread (a connection closed: there may be room).
  func poke() {
    var byte: UInt8 = 1
    _ = write(wake.write, &byte, 1)
  }

  // MARK: - The accepting thread

  private func run() {
    while !stopping.read({ $0.stop }) {
      var overdue: [Int32] = []
      let nextDue = connections.endOverdue { fd in
        if waiting[fd] != nil {
          overdue.append(fd)  // ours: closed below, out of the lock
        } else {
          shutdown(fd, Int32(SHUT_RDWR))  // libmicrohttpd's thread sees the end and closes it
        }
      }
      for fd in overdue { drop(fd) }
      var fds = [pollfd(fd: wake.read, events: Int16(POLLIN), revents: 0)]
      let accepting = connections.count < limits.total && (pausedUntil?.hasPassed ?? true)
      if accepting {
        pausedUntil = nil
        fds.append(pollfd(fd: listener, events: Int16(POLLIN), revents: 0))
      }
      let now = Deadline.now()
      var wakeAt = nextDue
      for (fd, entry) in waiting {
        if let again = entry.lookAgain, now < again {
          wakeAt = min(wakeAt ?? again, again)
        } else {
          fds.append(pollfd(fd: fd, events: Int16(POLLIN), revents: 0))
        }
      }
      if let pausedUntil { wakeAt = min(wakeAt ?? pausedUntil, pausedUntil) }
      let timeout = wakeAt.map { Int32(min($0.millisecondsLeft, 1000)) } ?? 1000
      let ready = poll(&fds, nfds_t(fds.count), timeout)
      guard ready > 0 else { continue }
      if fds[0].revents != 0 { drainWake() }
      for entry in fds.dropFirst() where entry.revents != 0 {
        if entry.fd == listener { acceptAll() } else { look(at: entry.fd) }
      }
    }
    for fd in waiting.keys { drop(fd) }
  }

  private func drainWake() {
    var buffer = [UInt8](repeating: 0, count: 64)
    while read(wake.read, &buffer, buffer.count) > 0 {}
  }

  /// Accepts what is queued, within the limits.
  private func acceptAll() {
    while connections.count < limits.total {
      var storage = sockaddr_storage()
      var length = socklen_t(MemoryLayout<sockaddr_storage>.size)
      let fd = withUnsafeMutablePointer(to: &storage) { pointer in
        pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) {
          accept(listener, $0, &length)
        }
      }
      guard fd >= 0 else {
        switch errno {
        case EAGAIN, EWOULDBLOCK, EINTR, ECONNABORTED: return
        default:
          // EMFILE, ENFILE, ENOBUFS, ENOMEM: out of resources. Wait, not spin.
          pausedUntil = .after(seconds: 0.25)
          return
        }
      }
      _ = fcntl(fd, F_SETFD, FD_CLOEXEC)
      _ = fcntl(fd, F_SETFL, O_NONBLOCK)
      let socketAddress = withUnsafeBytes(of: &storage) { Array($0.prefix(Int(length))) }
      let address = Self.host(of: storage)
      guard connections.count(from: address) < limits.perAddress else {
        refuse(
          fd, status: "503 Service Unavailable", message: "too many connections from your address; close some and retry"
        )
        continue
      }
      connections.add(fd, address: address)
      waiting[fd] = (address, socketAddress, nil)
    }
  }

  /// The client's address without its port.
  private static func host(of storage: sockaddr_storage) -> [UInt8] {
    let family = Int32(storage.ss_family)
    return withUnsafeBytes(of: storage) { raw in
      if family == AF_INET6 {
        return Array(raw[8..<24])  // sin6_addr
      }
      return Array(raw[4..<8])  // sin_addr
    }
  }

  /// A waiting connection sent something: its request line, whole and well
  /// formed, sends it on to libmicrohttpd; malformed, gets a 400.
  private func look(at fd: Int32) {
    var buffer = [UInt8](repeating: 0, count: 8192)
    let count = recv(fd, &buffer, buffer.count, Int32(MSG_PEEK) | Int32(MSG_DONTWAIT))
    if count < 0 && (errno == EAGAIN || errno == EINTR) { return }
    guard count > 0 else { return drop(fd) }  // closed, or failed
    let verdict = buffer.withUnsafeBytes { RequestLine.check(UnsafeRawBufferPointer(rebasing: $0[..<count])) }
    switch verdict {
    case .valid:
      handOver(fd)
    case .invalid(let reason):
      waiting[fd] = nil
      connections.remove(fd)
      refuse(fd, status: "400 Bad Request", message: reason)
    case .incomplete where count == buffer.count:
      handOver(fd)  // a line this long: libmicrohttpd answers 414
    case .incomplete:
      // Part of a line: look again shortly (the peeked bytes keep the socket
      // readable, so polling it now would spin).
      waiting[fd]?.lookAgain = .after(seconds: 0.05)
    }
  }

  private func handOver(_ fd: Int32) {
    guard let entry = waiting.removeValue(forKey: fd), let daemon else { return }
    let added = entry.socketAddress.withUnsafeBytes { raw in
      MHD_add_connection(daemon, fd, raw.baseAddress!.assumingMemoryBound(to: sockaddr.self), socklen_t(raw.count))
    }
    // Refused (libmicrohttpd closed the socket): forget it.
    if added != msglog_mhd_yes() { connections.remove(fd) }
  }

  /// Closes a connection not handed over.
  private func drop(_ fd: Int32) {
    waiting[fd] = nil
    connections.remove(fd)
    close(fd)
  }

  /// libmicrohttpd closed a connection: there may be room for another.
  func closed(_ fd: Int32) {
    connections.remove(fd)
    poke()
  }

  /// Answers a connection not handed over, and closes it. What it sent is
  /// read first, so that closing does not reset the connection and lose
  /// the answer.
  private func refuse(_ fd: Int32, status: String, message: String) {
    var json = JSONWriter()
    json.error(message)
    let body = json.take()
    let head =
      "HTTP/1.1 \(status)\r\nContent-Type: application/json\r\nContent-Length: \(body.count)\r\nConnection: close\r\n\r\n"
    let bytes = Array(head.utf8) + body
    var scratch = [UInt8](repeating: 0, count: 8192)
    while recv(fd, &scratch, scratch.count, Int32(MSG_DONTWAIT)) > 0 {}
    _ = send(fd, bytes, bytes.count, Int32(MSG_NOSIGNAL) | Int32(MSG_DONTWAIT))
    shutdown(fd, Int32(SHUT_WR))
    close(fd)
  }
}
