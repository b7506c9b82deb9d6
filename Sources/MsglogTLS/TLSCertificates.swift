import CGnuTLS

/// Certificates for TLS sessions: whom a client trusts (the system's roots
/// or a CA file), or a server's own chain and key. Loaded once and shared
/// by every session (GnuTLS credentials are read-only once set, and safe
/// to share between sessions and threads).
package final class TLSCertificates: @unchecked Sendable {
  let credentials: gnutls_certificate_credentials_t

  /// Empty credentials; GnuTLS must be loaded (`GnuTLS.load()`).
  package init() throws(TLSCode) {
    var made: gnutls_certificate_credentials_t? = nil
    let allocated = gnutls_certificate_allocate_credentials(&made)
    guard allocated == GNUTLS_E_SUCCESS, let made else { throw TLSCode(allocated) }
    credentials = made
  }

  deinit { gnutls_certificate_free_credentials(credentials) }

  /// Trusts the PEM certificates in `path`: how many (0: none in it).
  package func trust(file path: String) throws(TLSCode) -> Int {
    let count = gnutls_certificate_set_x509_trust_file(credentials, path, GNUTLS_X509_FMT_PEM)
    guard count >= 0 else { throw TLSCode(count) }
    return Int(count)
  }

  /// Trusts the system's roots: how many (0: the system has none).
  package func trustSystemRoots() throws(TLSCode) -> Int {
    let count = gnutls_certificate_set_x509_system_trust(credentials)
    guard count >= 0 else { throw TLSCode(count) }
    return Int(count)
  }

  /// Presents the certificate (chain) in `certificate` with the private key
  /// in `key`, both PEM.
  package func present(certificate: String, key: String) throws(TLSCode) {
    let loaded = gnutls_certificate_set_x509_key_file(credentials, certificate, key, GNUTLS_X509_FMT_PEM)
    guard loaded >= 0 else { throw TLSCode(loaded) }
  }
}
