import CGnuTLS

#if canImport(Glibc)
  import Glibc
#endif

/// The certificates a client trusts: the system's roots, or the CA file
/// the caller names instead (a team's own authority, a self-signed server).
/// Loaded once per client, at its first https:// connection, and shared
/// by its sessions (GnuTLS credentials are read-only once set, and safe to
/// share between sessions and threads).
final class TLSCredentials: @unchecked Sendable {
  let credentials: gnutls_certificate_credentials_t

  init(caFile: String?, origin: String) throws {
    do throws(TLSFailure) {
      credentials = try Self.allocate()
    } catch {
      throw HTTPClientError.tls(origin: origin, error)
    }
    do throws(TLSFailure) {
      try Self.trust(caFile, in: credentials)
    } catch {
      throw HTTPClientError.tls(origin: origin, error)
    }
  }

  private static func allocate() throws(TLSFailure) -> gnutls_certificate_credentials_t {
    var made: gnutls_certificate_credentials_t? = nil
    let allocated = gnutls_certificate_allocate_credentials(&made)
    guard allocated == GNUTLS_E_SUCCESS, let made else { throw .failed(TLSLibrary.message(allocated)) }
    return made
  }

  private static func trust(_ caFile: String?, in credentials: gnutls_certificate_credentials_t) throws(TLSFailure) {
    if let caFile {
      let count = gnutls_certificate_set_x509_trust_file(credentials, caFile, GNUTLS_X509_FMT_PEM)
      if count == 0 { throw .caFile(path: caFile, reason: "it holds no PEM certificate") }
      if count < 0 {
        let readable = access(caFile, R_OK) == 0
        throw .caFile(
          path: caFile, reason: readable ? TLSLibrary.message(count) : systemMessage(errno))
      }
    } else {
      let count = gnutls_certificate_set_x509_system_trust(credentials)
      if count <= 0 {
        throw .failed(
          count == 0
            ? "the system has no trusted certificates (Debian: ca-certificates)"
            : "cannot load the system's trusted certificates: " + TLSLibrary.message(count))
      }
    }
  }

  deinit { gnutls_certificate_free_credentials(credentials) }
}
