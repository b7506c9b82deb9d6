import CGnuTLS
import Msglog

#if canImport(Glibc)
  import Glibc
#endif

/// The server's certificate (chain) and private key (`--tls-cert`,
/// `--tls-key`, PEM), loaded once at start into GnuTLS credentials that
/// every connection's session shares (read-only once set: safe across
/// sessions and threads). GnuTLS is loaded with `dlopen` (CGnuTLS), as the
/// HTTP client loads it; msglog-serve is a dynamic executable, so it runs
/// in process.
final class TLSServerCredentials: @unchecked Sendable {
  let credentials: gnutls_certificate_credentials_t

  init(_ files: ServerConfiguration.TLSFiles) throws(ServerError) {
    var reason = [CChar](repeating: 0, count: 512)
    guard msglog_gnutls_load(&reason, UInt(reason.count)) == 0 else {
      throw ServerError(
        "cannot serve HTTPS: " + String(decoding: reason.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self))
    }
    for (option, path) in [("--tls-cert", files.certificate), ("--tls-key", files.key)] where access(path, R_OK) != 0 {
      throw ServerError("cannot read \(option) \(TerminalText.quoted(path)): \(String(cString: strerror(errno)))")
    }
    var made: gnutls_certificate_credentials_t? = nil
    let allocated = gnutls_certificate_allocate_credentials(&made)
    guard allocated == GNUTLS_E_SUCCESS, let made else {
      throw ServerError("cannot serve HTTPS: \(Self.message(allocated))")
    }
    let loaded = gnutls_certificate_set_x509_key_file(made, files.certificate, files.key, GNUTLS_X509_FMT_PEM)
    guard loaded >= 0 else {
      gnutls_certificate_free_credentials(made)
      throw ServerError(
        "cannot use the certificate \(TerminalText.quoted(files.certificate)) with the key "
          + "\(TerminalText.quoted(files.key)): \(Self.message(loaded))",
        hint: "both PEM files: the certificate (its chain after it) and its unencrypted private key")
    }
    credentials = made
  }

  deinit { gnutls_certificate_free_credentials(credentials) }

  static func message(_ code: Int32) -> String {
    guard let text = gnutls_strerror(code) else { return "GnuTLS error \(code)" }
    var words = String(cString: text)
    if words.hasSuffix(".") { words.removeLast() }
    return words.prefix(1).lowercased() + words.dropFirst()
  }
}
