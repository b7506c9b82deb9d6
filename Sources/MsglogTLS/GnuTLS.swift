import CGnuTLS

/// GnuTLS, loaded with `dlopen` the first time it is needed (CGnuTLS), and
/// its result codes. The only module that imports CGnuTLS: the server's
/// `--tls-cert` and the client's https:// stand on `TLSSession` and
/// `TLSCertificates`.
package enum GnuTLS {
  /// Loads libgnutls.so.30 (once per process) and returns its version
  /// (`3.7.9`); throws the loader's reason. Safe from any thread.
  package static func load() throws(Unavailable) -> String {
    var error = [CChar](repeating: 0, count: 512)
    guard msglog_gnutls_load(&error, UInt(error.count)) == 0 else {
      throw Unavailable(reason: String(decoding: error.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self))
    }
    return gnutls_check_version(nil).map { String(cString: $0) } ?? "?"
  }

  /// Whether this process can run GnuTLS itself: not a static executable
  /// (see CGnuTLS's gnutls.c).
  package static var canRunInProcess: Bool { msglog_gnutls_can_load() != 0 }

  /// GnuTLS could not be loaded, and why (in the loader's words).
  package struct Unavailable: Error {
    package let reason: String
  }
}

/// A GnuTLS result code that failed a call: switch on the named ones,
/// `message` for a person.
package struct TLSCode: Error, Equatable, Sendable {
  package let rawValue: Int32

  package init(_ rawValue: Int32) { self.rawValue = rawValue }

  /// The peer's certificate failed verification (`TLSSession.certificateStatus` says why).
  package static let certificateVerification = TLSCode(GNUTLS_E_CERTIFICATE_VERIFICATION_ERROR)
  /// The peer closed the connection without ending TLS.
  package static let prematureTermination = TLSCode(GNUTLS_E_PREMATURE_TERMINATION)
  /// The socket failed under GnuTLS (a reset).
  package static let pullFailed = TLSCode(GNUTLS_E_PULL_ERROR)
  package static let pushFailed = TLSCode(GNUTLS_E_PUSH_ERROR)
  /// The peer sent a fatal alert (`TLSSession.receivedAlert` names it).
  package static let fatalAlertReceived = TLSCode(GNUTLS_E_FATAL_ALERT_RECEIVED)

  /// The peer does not speak TLS (an http:// server, say).
  package var isNotTLS: Bool {
    [GNUTLS_E_UNEXPECTED_PACKET_LENGTH, GNUTLS_E_UNSUPPORTED_VERSION_PACKET, GNUTLS_E_UNEXPECTED_PACKET].contains(
      rawValue)
  }

  /// The socket failed under GnuTLS.
  package var isReset: Bool { self == .pullFailed || self == .pushFailed }

  /// GnuTLS's words for the code, fit for a message.
  package var message: String {
    gnutls_strerror(rawValue).map { lowercasedSentence(String(cString: $0)) } ?? "GnuTLS error \(rawValue)"
  }
}

/// A library's message made fit for `msglog: …`: no final period, the
/// first letter lowercase unless it starts an acronym.
package func lowercasedSentence(_ text: String) -> String {
  var text = Substring(text)
  while text.last == "." || text.last == " " || text.last == "\n" { text.removeLast() }
  guard let first = text.first else { return "" }
  // "TLS …", "X.509 …": an acronym keeps its capitals.
  guard let second = text.dropFirst().first, second.isLowercase || second == " " else { return String(text) }
  return first.lowercased() + text.dropFirst()
}
