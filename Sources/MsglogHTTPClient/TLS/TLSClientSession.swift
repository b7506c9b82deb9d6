import MsglogTLS

#if canImport(Glibc)
  import Glibc
#endif

/// TLS over one connected socket, as a client: the server's certificate
/// verified against the client's credentials and for the URL's host (name
/// or address) during the handshake, so no byte of a request is sent to a
/// server that has not proved who it is.
///
/// The session (`TLSSession`, the server's too) never blocks; this waits
/// on the socket (and the client's cancellation) in the direction it asks
/// for, within the client's deadlines, and names what failed.
final class TLSClientSession {
  private let session: TLSSession
  private let socket: Socket
  /// The name or address the certificate must be for.
  private let host: String

  init(socket: Socket, credentials: TLSCredentials, host: HTTPURL.Host) throws {
    self.socket = socket
    let serverName: String?
    switch host {
    case .name(let text):
      self.host = text
      serverName = text
    case .ipv4(let text), .ipv6(let text):
      self.host = text
      serverName = nil
    }
    do throws(TLSCode) {
      session = try TLSSession(
        .client(host: self.host, serverName: serverName), descriptor: socket.descriptor,
        certificates: credentials.certificates)
    } catch {
      throw HTTPClientError.tls(origin: socket.origin, .failed(error.message))
    }
  }

  // close_notify, if it goes out at once; the socket closes after.
  deinit { session.bye() }

  /// The handshake, within `timeout` seconds.
  func handshake(timeout: Double) throws {
    let deadline = Deadline(in: timeout)
    while true {
      switch session.handshake() {
      case .done: return
      case .wouldBlock: try socket.wait(for: direction, until: deadline, phase: .connect, seconds: timeout)
      case .failed(let code): throw handshakeFailure(code)
      }
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

  /// One record read, without waiting.
  func receiveAvailable(into buffer: UnsafeMutableRawBufferPointer) throws -> Received {
    switch session.receive(into: buffer) {
    case .bytes(let count): return .bytes(count)
    case .wouldBlock: return .wouldBlock
    case .again: return .again
    case .ended(let clean): return .ended(clean: clean)
    case .failed(let code) where code.isReset:
      throw HTTPClientError.connectionLost(origin: socket.origin, reason: "reset the connection")
    case .failed(let code): throw recordFailure(code)
    }
  }

  /// Sends all of `bytes`, waiting at most `idle` seconds each time the
  /// server takes none.
  func send(_ bytes: ArraySlice<UInt8>, idle: Double) throws {
    var rest = bytes
    var deadline = Deadline(in: idle)
    while !rest.isEmpty {
      if socket.cancellation.isRaised { throw HTTPClientError.cancelled(origin: socket.origin) }
      switch rest.withUnsafeBytes({ session.send($0) }) {
      case .bytes(let count):
        rest = rest.dropFirst(count)
        deadline = Deadline(in: idle)
      case .wouldBlock:
        try socket.wait(for: direction, until: deadline, phase: .answer, seconds: idle)
      case .failed(let code) where code.isReset:
        throw HTTPClientError.connectionLost(origin: socket.origin, reason: "reset the connection")
      case .failed(let code):
        throw recordFailure(code)
      }
    }
  }

  var descriptor: Int32 { socket.descriptor }

  /// Whether GnuTLS holds decrypted bytes not yet read.
  var hasPendingInput: Bool { session.hasPendingInput }

  /// Which way the session was waiting when it would block.
  var direction: Int16 { Int16(session.waitsToWrite ? POLLOUT : POLLIN) }

  private func handshakeFailure(_ code: TLSCode) -> HTTPClientError {
    let origin = socket.origin
    switch code {
    case .certificateVerification:
      return .tls(origin: origin, verificationFailure(session.certificateStatus))
    case .prematureTermination:
      return .connectionLost(origin: origin, reason: "closed the connection during the TLS handshake")
    case let code where code.isReset:
      return .connectionLost(origin: origin, reason: "reset the connection during the TLS handshake")
    case let code where code.isNotTLS:
      return .tls(origin: origin, .failed(code.message + " (is it an http:// server?)"))
    default:
      return recordFailure(code)
    }
  }

  private func recordFailure(_ code: TLSCode) -> HTTPClientError {
    if code == .fatalAlertReceived, let name = session.receivedAlert {
      return .tls(origin: socket.origin, .failed("the server sent the alert: " + lowercasedSentence(name)))
    }
    return .tls(origin: socket.origin, .failed(code.message))
  }

  /// The first reason, in the order a user would fix them: whom to trust
  /// before when or what for.
  private func verificationFailure(_ status: TLSSession.CertificateStatus) -> TLSFailure {
    if status.contains(.revoked) { return .revoked }
    if !status.isDisjoint(with: [.signerNotFound, .signerNotCA, .signatureFailure]) { return .untrusted }
    if status.contains(.insecureAlgorithm) { return .insecureAlgorithm }
    if status.contains(.expired) { return .expired }
    if status.contains(.notActivated) { return .notYetValid }
    if status.contains(.unexpectedOwner) { return .wrongName(host: host) }
    return .untrusted
  }
}
