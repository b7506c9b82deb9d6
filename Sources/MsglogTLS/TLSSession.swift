import CGnuTLS

#if canImport(Glibc)
  import Glibc
#endif

/// TLS over one connected non-blocking socket, as a server or a client:
/// every call returns at once, saying what came of it or that it would
/// block (and then `waitsToWrite` says which way to wait). The server's
/// connections (`TLSTransport`, on an event loop) and the client's
/// (`TLSClientSession`, which polls with deadlines) wait in their own ways
/// around the same session.
///
/// GnuTLS's rules are kept here once: a call interrupted by a signal is
/// made again; a record send that would block must be offered the same
/// bytes again, and is; a record that carries no data (a warning alert, a
/// refused renegotiation) is `.again`, not an end.
package final class TLSSession {
  package enum Role {
    case server
    /// A client that verifies the server's certificate for `host` (a name
    /// or an address) during the handshake; `serverName` goes out as SNI
    /// (a name, never an address: RFC 6066 §3).
    case client(host: String, serverName: String?)
  }

  /// What a step came to.
  package enum Step: Equatable {
    case done
    /// Wait on the socket (`waitsToWrite`), then step again.
    case wouldBlock
    case failed(TLSCode)
  }

  package enum Received: Equatable {
    case bytes(Int)
    /// Nothing decrypted yet: wait on the socket (`waitsToWrite`).
    case wouldBlock
    /// A record that carried no data: call again.
    case again
    /// The peer ended TLS (`clean`: with close_notify; else the connection
    /// ended without it, which cuts a body that runs to its end).
    case ended(clean: Bool)
    case failed(TLSCode)
  }

  package enum Sent: Equatable {
    case bytes(Int)
    /// Nothing went: wait on the socket, then offer the same bytes again.
    case wouldBlock
    case failed(TLSCode)
  }

  private let session: gnutls_session_t
  /// The host the certificate must be for, as GnuTLS holds it:
  /// gnutls_session_set_verify_cert keeps the pointer, not a copy, for the
  /// session's life.
  private let hostForVerification: UnsafeMutablePointer<CChar>?
  /// What a record send that would block was offered: GnuTLS must be
  /// offered the same bytes again, and returns once they are sent.
  private var offered: Int? = nil

  package init(_ role: Role, descriptor: Int32, certificates: TLSCertificates) throws(TLSCode) {
    var made: gnutls_session_t? = nil
    let flags: UInt32
    switch role {
    case .server: flags = UInt32(GNUTLS_SERVER)
    case .client: flags = UInt32(GNUTLS_CLIENT)
    }
    let initialized = gnutls_init(&made, flags | UInt32(GNUTLS_NONBLOCK))
    guard initialized == GNUTLS_E_SUCCESS, let made else { throw TLSCode(initialized) }
    session = made
    switch role {
    case .server:
      hostForVerification = nil
    case .client(let host, let serverName):
      if let serverName {
        _ = serverName.withCString { gnutls_server_name_set(made, GNUTLS_NAME_DNS, $0, strlen($0)) }
      }
      hostForVerification = strdup(host)
    }
    _ = gnutls_set_default_priority(session)
    _ = gnutls_credentials_set(session, GNUTLS_CRD_CERTIFICATE, UnsafeMutableRawPointer(certificates.credentials))
    // The host name check is GnuTLS's (RFC 6125: the SAN names, wildcards in
    // the leftmost label only; an address against the iPAddress SANs).
    if let hostForVerification { gnutls_session_set_verify_cert(session, hostForVerification, 0) }
    msglog_gnutls_use_socket(session, descriptor)
  }

  deinit {
    gnutls_deinit(session)
    free(hostForVerification)
  }

  /// One step of the handshake.
  package func handshake() -> Step {
    while true {
      let result = gnutls_handshake(session)
      if result == GNUTLS_E_SUCCESS { return .done }
      if result == GNUTLS_E_INTERRUPTED { continue }
      if result == GNUTLS_E_AGAIN || gnutls_error_is_fatal(result) == 0 { return .wouldBlock }
      return .failed(TLSCode(result))
    }
  }

  /// One record read, without waiting.
  package func receive(into buffer: UnsafeMutableRawBufferPointer) -> Received {
    let count = gnutls_record_recv(session, buffer.baseAddress, buffer.count)
    if count > 0 { return .bytes(count) }
    if count == 0 { return .ended(clean: true) }
    let code = Int32(count)
    switch code {
    case GNUTLS_E_AGAIN: return .wouldBlock
    case GNUTLS_E_INTERRUPTED: return .again
    case GNUTLS_E_PREMATURE_TERMINATION: return .ended(clean: false)
    case GNUTLS_E_PULL_ERROR, GNUTLS_E_PUSH_ERROR: return .failed(TLSCode(code))
    default: return gnutls_error_is_fatal(code) == 0 ? .again : .failed(TLSCode(code))
    }
  }

  /// One record sent, without waiting: of `bytes`, how many went. After
  /// `.wouldBlock` pass the same bytes (or more after them) again.
  package func send(_ bytes: UnsafeRawBufferPointer) -> Sent {
    let count = min(offered ?? bytes.count, bytes.count)
    while true {
      let sent = gnutls_record_send(session, bytes.baseAddress, count)
      if sent > 0 {
        offered = nil
        return .bytes(sent)
      }
      switch Int32(sent) {
      case GNUTLS_E_AGAIN:
        offered = count
        return .wouldBlock
      case GNUTLS_E_INTERRUPTED: continue
      default: return .failed(TLSCode(Int32(sent)))
      }
    }
  }

  /// close_notify, if it goes out at once.
  package func bye() { _ = gnutls_bye(session, GNUTLS_SHUT_WR) }

  /// Whether GnuTLS holds decrypted bytes not yet read.
  package var hasPendingInput: Bool { gnutls_record_check_pending(session) > 0 }

  /// Which way GnuTLS was waiting when it last would block: to write (a
  /// handshake flight, a record the socket did not take), else to read.
  package var waitsToWrite: Bool { gnutls_record_get_direction(session) == 1 }

  /// Why the peer's certificate failed verification.
  package var certificateStatus: CertificateStatus {
    CertificateStatus(rawValue: gnutls_session_get_verify_cert_status(session))
  }

  /// The name of the fatal alert the peer sent (after `.fatalAlertReceived`).
  package var receivedAlert: String? {
    gnutls_alert_get_name(gnutls_alert_get(session)).map { String(cString: $0) }
  }

  /// GnuTLS's verification status flags, by name.
  package struct CertificateStatus: OptionSet {
    package let rawValue: UInt32
    package init(rawValue: UInt32) { self.rawValue = rawValue }

    package static let revoked = Self(GNUTLS_CERT_REVOKED)
    package static let signerNotFound = Self(GNUTLS_CERT_SIGNER_NOT_FOUND)
    package static let signerNotCA = Self(GNUTLS_CERT_SIGNER_NOT_CA)
    package static let signatureFailure = Self(GNUTLS_CERT_SIGNATURE_FAILURE)
    package static let insecureAlgorithm = Self(GNUTLS_CERT_INSECURE_ALGORITHM)
    package static let expired = Self(GNUTLS_CERT_EXPIRED)
    package static let notActivated = Self(GNUTLS_CERT_NOT_ACTIVATED)
    package static let unexpectedOwner = Self(GNUTLS_CERT_UNEXPECTED_OWNER)

    private init(_ flag: gnutls_certificate_status_t) { rawValue = flag.rawValue }
  }
}
