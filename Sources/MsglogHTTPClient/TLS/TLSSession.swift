import CGnuTLS

#if canImport(Glibc)
  import Glibc
#endif

/// TLS over one connected socket, as a client: the server's certificate
/// verified against the client's credentials and for the URL's host (name
/// or address) during the handshake, so no byte of a request is sent to a
/// server that has not proved who it is.
///
/// Non-blocking: every GnuTLS call that would block returns
/// `GNUTLS_E_AGAIN`, and the session waits on the socket (and the client's
/// cancellation) in the direction GnuTLS asks for.
final class TLSSession {
  private let session: gnutls_session_t
  private let socket: Socket
  /// The name or address the certificate must be for.
  private let host: String
  /// The same, as GnuTLS holds it: gnutls_session_set_verify_cert keeps
  /// the pointer, not a copy, for the session's life.
  private let hostForVerification: UnsafeMutablePointer<CChar>

  init(socket: Socket, credentials: TLSCredentials, host: HTTPURL.Host) throws {
    self.socket = socket
    var made: gnutls_session_t? = nil
    let initialized = gnutls_init(&made, UInt32(GNUTLS_CLIENT) | UInt32(GNUTLS_NONBLOCK))
    guard initialized == GNUTLS_E_SUCCESS, let made else {
      throw HTTPClientError.tls(origin: socket.origin, .failed(TLSLibrary.message(initialized)))
    }
    session = made
    switch host {
    case .name(let text):
      self.host = text
      // SNI names a host, never an address (RFC 6066 §3).
      _ = text.withCString { gnutls_server_name_set(made, GNUTLS_NAME_DNS, $0, strlen($0)) }
    case .ipv4(let text), .ipv6(let text):
      self.host = text
    }
    hostForVerification = strdup(self.host)
    _ = gnutls_set_default_priority(session)
    _ = gnutls_credentials_set(session, GNUTLS_CRD_CERTIFICATE, UnsafeMutableRawPointer(credentials.credentials))
    // The host name check is GnuTLS's (RFC 6125: the SAN names, wildcards in
    // the leftmost label only; an address against the iPAddress SANs).
    gnutls_session_set_verify_cert(session, hostForVerification, 0)
    msglog_gnutls_use_socket(session, socket.descriptor)
  }

  deinit {
    // close_notify, if it goes out at once; the socket closes after.
    _ = gnutls_bye(session, GNUTLS_SHUT_WR)
    gnutls_deinit(session)
    free(hostForVerification)
  }

  /// The handshake, within `timeout` seconds.
  func handshake(timeout: Double) throws {
    let deadline = Deadline(in: timeout)
    while true {
      let result = gnutls_handshake(session)
      if result == GNUTLS_E_SUCCESS { return }
      if result == GNUTLS_E_AGAIN || result == GNUTLS_E_INTERRUPTED || gnutls_error_is_fatal(result) == 0 {
        try socket.wait(for: direction, until: deadline, phase: .connect, seconds: timeout)
        continue
      }
      throw handshakeFailure(result)
    }
  }

  /// What arrives: its length, 0 when the server ended TLS (close_notify),
  /// nil when the connection ended without it (which cuts a body that runs
  /// to the end of the connection).
  func receive(into buffer: UnsafeMutableRawBufferPointer, idle: Double) throws -> Int? {
    let deadline = Deadline(in: idle)
    while true {
      if socket.cancellation.isRaised { throw HTTPClientError.cancelled(origin: socket.origin) }
      switch try receiveAvailable(into: buffer) {
      case .bytes(let count): return count
      case .ended(let clean): return clean ? 0 : nil
      case .wouldBlock: try socket.wait(for: direction, until: deadline, phase: .answer, seconds: idle)
      case .again: continue
      }
    }
  }

  enum Received {
    case bytes(Int)
    /// Nothing decrypted yet: wait on the socket (in `direction`).
    case wouldBlock
    /// A record that carried no data (a warning alert, a refused TLS 1.2
    /// renegotiation): call again.
    case again
    /// The server ended TLS (`clean`: with close_notify).
    case ended(clean: Bool)
  }

  /// One gnutls_record_recv, without waiting.
  func receiveAvailable(into buffer: UnsafeMutableRawBufferPointer) throws -> Received {
    let count = gnutls_record_recv(session, buffer.baseAddress, buffer.count)
    if count > 0 { return .bytes(count) }
    if count == 0 { return .ended(clean: true) }
    let code = Int32(count)
    switch code {
    case GNUTLS_E_AGAIN, GNUTLS_E_INTERRUPTED: return .wouldBlock
    case GNUTLS_E_PREMATURE_TERMINATION: return .ended(clean: false)
    case GNUTLS_E_PULL_ERROR, GNUTLS_E_PUSH_ERROR:
      throw HTTPClientError.connectionLost(origin: socket.origin, reason: "reset the connection")
    default:
      guard gnutls_error_is_fatal(code) == 0 else { throw recordFailure(code) }
      return .again
    }
  }

  /// Sends all of `bytes`, waiting at most `idle` seconds each time the
  /// server takes none.
  func send(_ bytes: ArraySlice<UInt8>, idle: Double) throws {
    var rest = bytes
    var deadline = Deadline(in: idle)
    while !rest.isEmpty {
      if socket.cancellation.isRaised { throw HTTPClientError.cancelled(origin: socket.origin) }
      // After GNUTLS_E_AGAIN the same data is offered again, as GnuTLS requires.
      let count = rest.withUnsafeBytes { gnutls_record_send(session, $0.baseAddress, $0.count) }
      if count > 0 {
        rest = rest.dropFirst(count)
        deadline = Deadline(in: idle)
        continue
      }
      let code = Int32(count)
      switch code {
      case GNUTLS_E_AGAIN, GNUTLS_E_INTERRUPTED:
        try socket.wait(for: direction, until: deadline, phase: .answer, seconds: idle)
      case GNUTLS_E_PULL_ERROR, GNUTLS_E_PUSH_ERROR:
        throw HTTPClientError.connectionLost(origin: socket.origin, reason: "reset the connection")
      default:
        throw recordFailure(code)
      }
    }
  }

  var descriptor: Int32 { socket.descriptor }

  /// Whether GnuTLS holds decrypted bytes not yet read.
  var hasPendingInput: Bool { gnutls_record_check_pending(session) > 0 }

  /// Which way GnuTLS was waiting when it returned `GNUTLS_E_AGAIN`.
  var direction: Int16 { Int16(gnutls_record_get_direction(session) == 1 ? POLLOUT : POLLIN) }

  private func handshakeFailure(_ code: Int32) -> HTTPClientError {
    let origin = socket.origin
    switch code {
    case GNUTLS_E_CERTIFICATE_VERIFICATION_ERROR:
      return .tls(origin: origin, verificationFailure(gnutls_session_get_verify_cert_status(session)))
    case GNUTLS_E_PREMATURE_TERMINATION:
      return .connectionLost(origin: origin, reason: "closed the connection during the TLS handshake")
    case GNUTLS_E_PULL_ERROR, GNUTLS_E_PUSH_ERROR:
      return .connectionLost(origin: origin, reason: "reset the connection during the TLS handshake")
    case GNUTLS_E_UNEXPECTED_PACKET_LENGTH, GNUTLS_E_UNSUPPORTED_VERSION_PACKET, GNUTLS_E_UNEXPECTED_PACKET:
      return .tls(origin: origin, .failed(TLSLibrary.message(code) + " (is it an http:// server?)"))
    default:
      return recordFailure(code)
    }
  }

  private func recordFailure(_ code: Int32) -> HTTPClientError {
    if code == GNUTLS_E_FATAL_ALERT_RECEIVED, let name = gnutls_alert_get_name(gnutls_alert_get(session)) {
      return .tls(
        origin: socket.origin, .failed("the server sent the alert: " + lowercasedSentence(String(cString: name))))
    }
    return .tls(origin: socket.origin, .failed(TLSLibrary.message(code)))
  }

  /// The first reason, in the order a user would fix them: whom to trust
  /// before when or what for.
  private func verificationFailure(_ status: UInt32) -> TLSFailure {
    func has(_ flag: gnutls_certificate_status_t) -> Bool { status & flag.rawValue != 0 }
    if has(GNUTLS_CERT_REVOKED) { return .revoked }
    if has(GNUTLS_CERT_SIGNER_NOT_FOUND) || has(GNUTLS_CERT_SIGNER_NOT_CA) || has(GNUTLS_CERT_SIGNATURE_FAILURE) {
      return .untrusted
    }
    if has(GNUTLS_CERT_INSECURE_ALGORITHM) { return .insecureAlgorithm }
    if has(GNUTLS_CERT_EXPIRED) { return .expired }
    if has(GNUTLS_CERT_NOT_ACTIVATED) { return .notYetValid }
    if has(GNUTLS_CERT_UNEXPECTED_OWNER) { return .wrongName(host: host) }
    return .untrusted
  }
}
