import Foundation

/// A TCP connection to a server on 127.0.0.1: for tests that must send
/// bytes no HTTP client would (raw request lines, conflicting headers, a
/// request trickled byte by byte) or hold many connections open, and for the
/// bench's keep-alive HTTP clients.
public final class LoopbackSocket: @unchecked Sendable {  // used by one thread at a time
  public let fd: Int32

  /// Connects (blocking); nil when the connection is refused. `source`
  /// binds the client's end to another loopback address (`127.0.0.2`: a
  /// second client machine, for per-address limits); `receiveBuffer` sets
  /// its kernel buffer (a client that reads nothing takes little).
  ///
  /// The descriptor is kept only once connected: an object whose stored
  /// properties are all set is deinitialized even when its init then fails,
  /// and its `deinit` would close the descriptor a second time — by then,
  /// maybe, another thread's newly opened file.
  public init?(port: UInt16, from source: String? = nil, receiveBuffer: Int? = nil) {
    let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    guard fd >= 0 else { return nil }
    if var size = receiveBuffer.map(Int32.init) {
      setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &size, socklen_t(MemoryLayout<Int32>.size))
    }
    if let source {
      var local = sockaddr_in()
      local.sin_family = sa_family_t(AF_INET)
      local.sin_addr.s_addr = inet_addr(source)
      let bound = withUnsafePointer(to: &local) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
      }
      guard bound == 0 else {
        close(fd)
        return nil
      }
    }
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_port = port.bigEndian
    address.sin_addr.s_addr = inet_addr("127.0.0.1")
    let connected = withUnsafePointer(to: &address) {
      $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
        connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
      }
    }
    guard connected == 0 else {
      close(fd)
      return nil
    }
    self.fd = fd
  }

  /// Sends each write at once instead of waiting to fill a segment (Nagle),
  /// as a latency-bound client must.
  public func sendImmediately() {
    var one: Int32 = 1
    setsockopt(fd, Int32(IPPROTO_TCP), TCP_NODELAY, &one, socklen_t(MemoryLayout<Int32>.size))
  }

  deinit { close(fd) }

  /// Sends all of `text`; false when the server has closed the connection.
  @discardableResult
  public func send(_ text: String) -> Bool { send(Array(text.utf8)) }

  @discardableResult
  public func send(_ bytes: [UInt8]) -> Bool {
    var offset = 0
    while offset < bytes.count {
      let n = bytes[offset...].withUnsafeBytes { Foundation.send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
      if n <= 0 { return false }
      offset += n
    }
    return true
  }

  /// What arrives within `seconds` (less when the server closes first),
  /// and whether the server closed the connection.
  public func receive(seconds: Double, until done: (String) -> Bool = { _ in false }) -> (text: String, closed: Bool) {
    var bytes: [UInt8] = []
    var buffer = [UInt8](repeating: 0, count: 65_536)
    let deadline = Date().addingTimeInterval(seconds)
    while Date() < deadline {
      var poller = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
      let left = Int32(max(1, deadline.timeIntervalSinceNow * 1000))
      guard poll(&poller, 1, min(left, 200)) > 0 else { continue }
      let n = recv(fd, &buffer, buffer.count, 0)
      if n <= 0 { return (String(decoding: bytes, as: UTF8.self), true) }
      bytes += buffer[..<n]
      if done(String(decoding: bytes, as: UTF8.self)) { break }
    }
    return (String(decoding: bytes, as: UTF8.self), false)
  }

  /// Sends as much of `bytes` as the socket takes without waiting; how many it took.
  public func sendAvailable(_ bytes: [UInt8]) -> Int {
    let n = bytes.withUnsafeBytes { Foundation.send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL | MSG_DONTWAIT)) }
    return max(n, 0)
  }

  /// Reads up to `count` bytes, waiting at most `seconds`; nil when the server closed.
  public func read(atMost count: Int, seconds: Double) -> [UInt8]? {
    var poller = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
    guard poll(&poller, 1, Int32(seconds * 1000)) > 0 else { return [] }
    var buffer = [UInt8](repeating: 0, count: count)
    let n = recv(fd, &buffer, count, 0)
    return n > 0 ? Array(buffer[..<n]) : nil
  }

  /// Whether `text` holds a whole HTTP answer (by its Content-Length, or
  /// the last chunk).
  public static func isWholeAnswer(_ text: String) -> Bool {
    guard let end = text.range(of: "\r\n\r\n") else { return false }
    let head = text[..<end.lowerBound].lowercased()
    let body = text[end.upperBound...]
    if let line = head.split(separator: "\r\n").first(where: { $0.hasPrefix("content-length:") }),
      let length = Int(line.dropFirst("content-length:".count).trimmingCharacters(in: .whitespaces))
    {
      return body.utf8.count >= length
    }
    if head.contains("transfer-encoding: chunked") { return body.hasSuffix("0\r\n\r\n") }
    return false
  }

  /// One raw request; the answer's status (0 when none came), the whole
  /// answer, and whether the server closed the connection after it.
  public static func exchange(port: UInt16, _ request: String, seconds: Double = 5) -> (
    status: Int, text: String, closed: Bool
  ) {
    guard let socket = LoopbackSocket(port: port) else { return (0, "", true) }
    socket.send(request)
    var (text, closed) = socket.receive(seconds: seconds, until: isWholeAnswer)
    if !closed {
      // Whole: does the server close the connection after it?
      let rest = socket.receive(seconds: 2)
      text += rest.text
      closed = rest.closed
    }
    let status = text.hasPrefix("HTTP/1.") ? Int(text.dropFirst(9).prefix(3)) ?? 0 : 0
    return (status, text, closed)
  }
}
