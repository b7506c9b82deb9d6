import CGnuTLS

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
  private let session: gnutls_session_t
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
  /// What a `gnutls_record_send` that would block was offered: GnuTLS must
  /// be offered the same bytes again, and returns once they are sent.
  private var offered: Int? = nil
  /// GnuTLS waits to write (a handshake flight or a record the socket did not take).
  private(set) var needsWritable = false

  init?(fd: Int32, credentials: TLSServerCredentials) {
    var made: gnutls_session_t? = nil
    guard gnutls_init(&made, UInt32(GNUTLS_SERVER) | UInt32(GNUTLS_NONBLOCK)) == GNUTLS_E_SUCCESS, let made else {
      return nil
    }
    self.fd = fd
    session = made
    _ = gnutls_set_default_priority(session)
    _ = gnutls_credentials_set(session, GNUTLS_CRD_CERTIFICATE, UnsafeMutableRawPointer(credentials.credentials))
    msglog_gnutls_use_socket(session, fd)
  }

  deinit {
    close()
    gnutls_deinit(session)
  }

  var hasBufferedInput: Bool { handshaken && !closed && gnutls_record_check_pending(session) > 0 }

  var carriesPlainHTTPOnHTTPSPort: Bool { if case .plain = stage { true } else { false } }

  func read(into buffer: UnsafeMutableRawBufferPointer) -> TransportResult {
    if !handshaken, let waiting = handshake() { return waiting }
    if case .plain = stage { return SocketTransport.receive(fd, into: buffer) }
    while true {
      let count = gnutls_record_recv(session, buffer.baseAddress, buffer.count)
      if count > 0 { return .bytes(count) }
      if count == 0 { return .ended }
      switch Int32(count) {
      case GNUTLS_E_AGAIN: return .wouldBlock
      case GNUTLS_E_INTERRUPTED: continue
      // A client that closes without close_notify has ended all the same
      // (a request is framed by HTTP, never by the end of the connection).
      case GNUTLS_E_PREMATURE_TERMINATION: return .ended
      case let code where gnutls_error_is_fatal(code) == 0: continue  // a warning alert, a refused renegotiation
      default: return .failed(EPROTO)
      }
    }
  }

  func write(_ bytes: UnsafeRawBufferPointer) -> TransportResult {
    if !handshaken {
      if let waiting = handshake() { return waiting == .ended ? .failed(EPIPE) : waiting }
    }
    if case .plain = stage { return SocketTransport.send(fd, bytes) }
    let count = min(offered ?? bytes.count, bytes.count)
    while true {
      let sent = gnutls_record_send(session, bytes.baseAddress, count)
      if sent > 0 {
        offered = nil
        needsWritable = false
        return .bytes(sent)
      }
      switch Int32(sent) {
      case GNUTLS_E_AGAIN:
        offered = count
        needsWritable = true
        return .wouldBlock
      case GNUTLS_E_INTERRUPTED: continue
      default: return .failed(EPIPE)
      }
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
    while true {
      let result = gnutls_handshake(session)
      if result == GNUTLS_E_SUCCESS {
        stage = .established
        needsWritable = false
        return nil
      }
      if result == GNUTLS_E_INTERRUPTED { continue }
      if result == GNUTLS_E_AGAIN || gnutls_error_is_fatal(result) == 0 {
        needsWritable = gnutls_record_get_direction(session) == 1
        return .wouldBlock
      }
      return .failed(EPROTO)
    }
  }

  func shutdownOutput() {
    // close_notify, if it goes out at once: the client sees a clean end.
    if handshaken && !closed { _ = gnutls_bye(session, GNUTLS_SHUT_WR) }
    shutdown(fd, Int32(SHUT_WR))
  }

  func close() {
    guard !closed else { return }
    closed = true
    Glibc.close(fd)
  }
}
