import MsglogPosix
import MsglogTLS

#if canImport(Glibc)
  import Glibc
#endif

/// A connection's bytes through TLS (`--tls-cert`): a GnuTLS server session
/// over the non-blocking socket, behind the same `Transport` the plain
/// socket is — so the framing, limits, deadlines and answers above it are
/// the same for HTTPS. The handshake is driven by the first reads (the
/// connection's head deadline covers it). A client that speaks plain HTTP
/// to this port has its bytes passed up as they are: the connection reads
/// its request and answers, in plain HTTP, a 400 saying so
/// (`carriesPlainHTTPOnHTTPSPort`), with a line in the request log.
final class TLSTransport: Transport {
  let fd: Int32
  private let session: TLSSession
  private enum Stage {
    /// The first byte not yet looked at: a TLS handshake record (0x16), or not.
    case unsniffed
    case handshaking
    case established
    /// Not TLS: plain bytes, for the connection to refuse.
    case plain
  }
  private var stage = Stage.unsniffed
  private var handshaken: Bool { if case .established = stage { true } else { false } }
  private var closed = false
  /// GnuTLS waits to write (a handshake flight or a record the socket did not take).
  private(set) var needsWritable = false

  init?(fd: Int32, credentials: TLSServerCredentials) {
    guard let session = try? TLSSession(.server, descriptor: fd, certificates: credentials.certificates) else {
      return nil
    }
    self.fd = fd
    self.session = session
  }

  deinit { close() }

  var hasBufferedInput: Bool { handshaken && !closed && session.hasPendingInput }

  var carriesPlainHTTPOnHTTPSPort: Bool { if case .plain = stage { true } else { false } }

  func read(into buffer: UnsafeMutableRawBufferPointer) -> TransportResult {
    if !handshaken, let waiting = handshake() { return waiting }
    if case .plain = stage { return SocketCall.receive(fd, into: buffer) }
    while true {
      switch session.receive(into: buffer) {
      case .bytes(let count): return .bytes(count)
      case .wouldBlock: return .wouldBlock
      // A client that closes without close_notify has ended all the same
      // (a request is framed by HTTP, never by the end of the connection).
      case .ended: return .ended
      case .again: continue  // a warning alert, a refused renegotiation
      case .failed: return .failed(EPROTO)
      }
    }
  }

  func write(_ bytes: UnsafeRawBufferPointer) -> TransportResult {
    if !handshaken {
      if let waiting = handshake() { return waiting == .ended ? .failed(EPIPE) : waiting }
    }
    if case .plain = stage { return SocketCall.send(fd, bytes) }
    switch session.send(bytes) {
    case .bytes(let sent):
      needsWritable = false
      return .bytes(sent)
    case .wouldBlock:
      needsWritable = true
      return .wouldBlock
    case .failed: return .failed(EPIPE)
    }
  }

  /// One step of the handshake; nil once it is done (or the client speaks
  /// plain HTTP), else what to tell the connection.
  private func handshake() -> TransportResult? {
    switch stage {
    case .established, .plain: return nil
    case .handshaking: break
    case .unsniffed:
      var first: UInt8 = 0
      let peeked = recv(fd, &first, 1, Int32(MSG_PEEK))
      if peeked == 0 { return .ended }
      if peeked < 0 { return errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR ? .wouldBlock : .failed(errno) }
      stage = first == 0x16 ? .handshaking : .plain
      if case .plain = stage { return nil }
    }
    switch session.handshake() {
    case .done:
      stage = .established
      needsWritable = false
      return nil
    case .wouldBlock:
      needsWritable = session.waitsToWrite
      return .wouldBlock
    case .failed: return .failed(EPROTO)
    }
  }

  func shutdownOutput() {
    // close_notify, if it goes out at once: the client sees a clean end.
    if handshaken && !closed { session.bye() }
    shutdown(fd, Int32(SHUT_WR))
  }

  func close() {
    guard !closed else { return }
    closed = true
    Glibc.close(fd)
  }
}
