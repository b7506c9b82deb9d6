#if canImport(Glibc)
  import Glibc
#endif

/// The client's end of a TLS connection made by a helper process (see
/// `TLSRelay`): what it reads and writes is plaintext, its waits are the
/// socket pair's, with the client's deadlines and cancellation.
final class RelayedTLS {
  private let socket: Socket
  private let helper: pid_t
  /// Bytes from the helper not yet taken apart into frames.
  private var inbox: [UInt8] = []
  /// Data bytes of the current `D` frame still to come.
  private var dataLeft = 0

  /// Starts `program relay URL TIMEOUT [CAFILE]` and waits for its first line.
  init(
    program: String, url: HTTPURL, caFile: String?, connectTimeout: Double, cancellation: Cancellation
  ) throws {
    let origin = url.origin
    var pair: [Int32] = [0, 0]
    guard socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0, &pair) == 0 else {
      throw HTTPClientError.tls(origin: origin, .unavailable("cannot make a socket pair: " + systemMessage(errno)))
    }
    var actions = posix_spawn_file_actions_t()
    posix_spawn_file_actions_init(&actions)
    defer { posix_spawn_file_actions_destroy(&actions) }
    posix_spawn_file_actions_adddup2(&actions, pair[1], 0)
    posix_spawn_file_actions_adddup2(&actions, pair[1], 1)
    posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0)
    let scheme = "https://" + url.origin
    let words = [program, "relay", scheme, String(connectTimeout)] + (caFile.map { [$0] } ?? [])
    let argv: [UnsafeMutablePointer<CChar>?] = words.map { strdup($0) } + [nil]
    defer { for pointer in argv { free(pointer) } }
    var pid: pid_t = 0
    let spawned = posix_spawn(&pid, program, &actions, nil, argv, environ)
    close(pair[1])
    guard spawned == 0 else {
      close(pair[0])
      throw HTTPClientError.tls(
        origin: origin,
        .unavailable(
          "https:// in a static executable needs its helper \(program), which cannot be run: "
            + systemMessage(spawned)))
    }
    helper = pid
    _ = fcntl(pair[0], F_SETFL, fcntl(pair[0], F_GETFL) | O_NONBLOCK)
    socket = Socket(descriptor: pair[0], origin: origin, cancellation: cancellation)
    // The first line, within the connect timeout (and a moment to start).
    let deadline = Deadline(in: connectTimeout + 5)
    var line: [UInt8] = []
    var buffer = [UInt8](repeating: 0, count: 4_096)
    while !line.contains(0x0A) {
      let count = try buffer.withUnsafeMutableBytes { buffer in
        while true {
          let count = recv(pair[0], buffer.baseAddress, buffer.count, 0)
          if count >= 0 { return count }
          guard errno == EAGAIN || errno == EINTR else { return 0 }
          try socket.wait(for: Int16(POLLIN), until: deadline, phase: .connect, seconds: connectTimeout)
        }
      }
      guard count > 0 else {
        throw HTTPClientError.tls(origin: origin, .unavailable("the TLS helper \(program) ended without answering"))
      }
      line += buffer[..<count]
    }
    let end = line.firstIndex(of: 0x0A)!
    inbox = Array(line[(end + 1)...])
    let status = String(decoding: line[..<end], as: UTF8.self)
    guard status == "ok" else {
      let detail = status.hasPrefix("error\t") ? status.dropFirst(6) : status[...]
      throw HTTPClientError(relayLine: detail, origin: origin)
        ?? .tls(origin: origin, .failed("the TLS helper said: " + status))
    }
  }

  deinit {
    // The helper ends when its socket does; reap it (kill it if it lingers).
    shutdown(socket.descriptor, Int32(SHUT_RDWR))
    var status: Int32 = 0
    for _ in 0..<100 {
      if waitpid(helper, &status, WNOHANG) != 0 { return }
      usleep(1_000)
    }
    kill(helper, SIGKILL)
    while waitpid(helper, &status, 0) < 0 && errno == EINTR {}
  }

  func send(_ bytes: ArraySlice<UInt8>, idle: Double) throws { try socket.send(bytes, idle: idle) }

  /// As `TLSSession.receive`: a length, 0 at close_notify, nil at an end without it.
  func receive(into buffer: UnsafeMutableRawBufferPointer, idle: Double) throws -> Int? {
    while true {
      if dataLeft > 0, !inbox.isEmpty {
        let count = min(dataLeft, inbox.count, buffer.count)
        buffer.copyBytes(from: inbox[..<count])
        inbox.removeFirst(count)
        dataLeft -= count
        return count
      }
      if dataLeft == 0, inbox.count >= 5 {
        let length = Int(inbox[1]) << 24 | Int(inbox[2]) << 16 | Int(inbox[3]) << 8 | Int(inbox[4])
        switch inbox[0] {
        case UInt8(ascii: "D"):
          inbox.removeFirst(5)
          dataLeft = length
          continue
        case UInt8(ascii: "E"): return 0
        case UInt8(ascii: "U"): return nil
        case UInt8(ascii: "X") where inbox.count >= 5 + length:
          let line = String(decoding: inbox[5..<(5 + length)], as: UTF8.self)
          throw HTTPClientError(relayLine: line[...], origin: socket.origin)
            ?? .connectionLost(origin: socket.origin, reason: line)
        case UInt8(ascii: "X"): break
        default:
          throw HTTPClientError.tls(origin: socket.origin, .failed("the TLS helper sent a frame it should not"))
        }
      }
      var chunk = [UInt8](repeating: 0, count: 65_536)
      let count = try chunk.withUnsafeMutableBytes { try socket.receive(into: $0, idle: idle) }
      guard count > 0 else {
        throw HTTPClientError.connectionLost(
          origin: socket.origin, reason: "closed the connection (the TLS helper ended)")
      }
      inbox += chunk[..<count]
    }
  }

  /// Whether the helper has sent something while the connection sat idle
  /// (the server ended it): then it must not carry another request.
  var hasInput: Bool { !inbox.isEmpty || socket.hasInput }
}
