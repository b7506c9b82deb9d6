import CEpoll
import MsglogPosix

#if canImport(Glibc)
  import Glibc
#endif

/// The bytes of one connection, in and out: a plain socket, or TLS
/// (`TLSTransport`); everything above it — framing, limits, answers — is the same for
/// either. Non-blocking: a call that cannot proceed says so.
package protocol Transport: AnyObject {
  /// The socket, for the event loop's readiness.
  var fd: Int32 { get }
  func read(into buffer: UnsafeMutableRawBufferPointer) -> TransportResult
  func write(_ bytes: UnsafeRawBufferPointer) -> TransportResult
  /// No more bytes will be sent (the peer reads the end after the answer).
  func shutdownOutput()
  func close()
  /// It waits to write something of its own (TLS: a handshake's flight):
  /// the loop watches for writability and reads again when it comes.
  var needsWritable: Bool { get }
  /// Bytes already taken from the socket wait to be read (TLS: decrypted
  /// records), which the socket's readiness will not announce.
  var hasBufferedInput: Bool { get }
  /// A client spoke plain HTTP to the HTTPS port: the connection reads
  /// its request as plain bytes, to refuse it (400) as the server's own
  /// answer, logged and counted like any.
  var carriesPlainHTTPOnHTTPSPort: Bool { get }
}

extension Transport {
  package var needsWritable: Bool { false }
  package var hasBufferedInput: Bool { false }
  package var carriesPlainHTTPOnHTTPSPort: Bool { false }

  /// Bytes written to the socket that the client has not taken yet (the
  /// kernel's send queue; nil when it cannot say). The socket's buffers
  /// grow to megabytes, which a slow client may take for longer than the
  /// stall limit while the server can write nothing: its queue shrinking
  /// is the client's progress.
  var unsentBytes: Int? {
    let count = msglog_unsent_bytes(fd)
    return count >= 0 ? Int(count) : nil
  }
}

/// What a transport's read or write came to: a socket call's outcome
/// (TLS says the same of its records).
package typealias TransportResult = SocketResult

/// A plain TCP socket.
final class SocketTransport: Transport {
  let fd: Int32
  private var closed = false

  init(fd: Int32) { self.fd = fd }

  deinit { close() }

  func read(into buffer: UnsafeMutableRawBufferPointer) -> TransportResult { SocketCall.receive(fd, into: buffer) }

  func write(_ bytes: UnsafeRawBufferPointer) -> TransportResult { SocketCall.send(fd, bytes) }

  func shutdownOutput() { shutdown(fd, Int32(SHUT_WR)) }

  func close() {
    guard !closed else { return }
    closed = true
    Glibc.close(fd)
  }
}
