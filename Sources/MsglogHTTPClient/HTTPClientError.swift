/// Why a request did not get its whole answer, as a caller decides what to
/// do next: retry later (`unreachable`, `timedOut`, `connectionLost`), stop
/// and say so (`tls`, `malformedAnswer`, `invalidURL`, `invalidRequest`,
/// `answerTooLarge`), or end quietly (`cancelled`).
///
/// Its `description` is a lowercase sentence fit for `msglog: …`. It names
/// the server as `host:port` (an `HTTPURL` never holds credentials, and a
/// token is never part of a message).
package enum HTTPClientError: Error, Sendable, Equatable, CustomStringConvertible {
  /// The URL is not one the client can use (with the reason, the URL
  /// redacted).
  case invalidURL(String)
  /// The request could not be written as HTTP (a token or header value with
  /// a line break in it).
  case invalidRequest(String)
  /// The name did not resolve, or no address accepted a connection
  /// (refused, unreachable).
  case unreachable(origin: String, reason: String)
  /// No connection within the connect timeout, or no byte moved for the
  /// idle timeout while the answer was awaited or read.
  case timedOut(origin: String, phase: TimeoutPhase, seconds: Double)
  /// TLS could not be set up or failed, with why.
  case tls(origin: String, TLSFailure)
  /// The connection closed or was reset before the answer was whole.
  case connectionLost(origin: String, reason: String)
  /// The answer is not HTTP/1.1 as RFC 9112 frames it: the client never
  /// guesses where a malformed answer ends.
  case malformedAnswer(origin: String, reason: String)
  /// The body is longer than the caller's limit.
  case answerTooLarge(origin: String, limit: Int)
  /// `HTTPClient.cancel()` was called.
  case cancelled(origin: String)

  package enum TimeoutPhase: Sendable, Equatable {
    case connect, answer
    /// The whole exchange (`HTTPRequest.exchangeTimeout`), however steadily
    /// bytes came.
    case exchange
  }

  package var description: String {
    switch self {
    case .invalidURL(let reason), .invalidRequest(let reason): return reason
    case .unreachable(let origin, let reason): return "cannot reach \(origin): \(reason)"
    case .timedOut(let origin, .connect, let seconds):
      return "cannot reach \(origin): no connection within \(Self.format(seconds)) s"
    case .timedOut(let origin, .answer, let seconds):
      return "\(origin) sent nothing for \(Self.format(seconds)) s"
    case .timedOut(let origin, .exchange, let seconds):
      return "\(origin) did not answer whole within \(Self.format(seconds)) s"
    case .tls(let origin, let failure): return failure.description(origin: origin)
    case .connectionLost(let origin, let reason): return "\(origin) \(reason)"
    case .malformedAnswer(let origin, let reason): return "\(origin) sent a malformed answer: \(reason)"
    case .answerTooLarge(let origin, let limit): return "the answer from \(origin) is longer than \(limit) bytes"
    case .cancelled(let origin): return "the request to \(origin) was cancelled"
    }
  }

  private static func format(_ seconds: Double) -> String {
    seconds == seconds.rounded() ? String(Int(seconds)) : String(seconds)
  }
}

/// Why TLS failed: the certificate checks by name, since each asks the
/// user for something different (a CA file, a renewed certificate, the
/// name the certificate is for).
package enum TLSFailure: Error, Sendable, Equatable {
  /// libgnutls.so.30 could not be loaded (the loader's reason).
  case unavailable(String)
  /// The CA file could not be read, or holds no certificate.
  case caFile(path: String, reason: String)
  /// The certificate is not signed by a trusted authority.
  case untrusted
  case expired
  case notYetValid
  case revoked
  /// The certificate is not for the URL's host (name or address).
  case wrongName(host: String)
  /// Signed with an algorithm GnuTLS holds too weak.
  case insecureAlgorithm
  /// Any other failure of the handshake or of a record (GnuTLS's words).
  case failed(String)

  func description(origin: String) -> String {
    switch self {
    case .unavailable(let reason): return reason
    case .caFile(let path, let reason): return "cannot use the CA file \(path): \(reason)"
    case .untrusted: return "the certificate of \(origin) is not signed by a trusted authority"
    case .expired: return "the certificate of \(origin) has expired"
    case .notYetValid: return "the certificate of \(origin) is not valid yet"
    case .revoked: return "the certificate of \(origin) has been revoked"
    case .wrongName(let host): return "the certificate of \(origin) is not for \(host)"
    case .insecureAlgorithm: return "the certificate of \(origin) is signed with an insecure algorithm"
    case .failed(let reason): return "the TLS connection to \(origin) failed: \(reason)"
    }
  }
}
