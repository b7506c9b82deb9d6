import Msglog
import MsglogTLS

#if canImport(Glibc)
  import Glibc
#endif

/// The server's certificate (chain) and private key (`--tls-cert`,
/// `--tls-key`, PEM), loaded once at start into certificates that every
/// connection's session shares. GnuTLS is loaded with `dlopen` (CGnuTLS),
/// as the HTTP client loads it; msglog-serve is a dynamic executable, so it
/// runs in process.
final class TLSServerCredentials: @unchecked Sendable {
  let certificates: TLSCertificates

  init(_ files: ServerConfiguration.TLSFiles) throws(ServerError) {
    do throws(GnuTLS.Unavailable) {
      _ = try GnuTLS.load()
    } catch {
      throw ServerError("cannot serve HTTPS: " + error.reason)
    }
    for (option, path) in [("--tls-cert", files.certificate), ("--tls-key", files.key)] where access(path, R_OK) != 0 {
      throw ServerError("cannot read \(option) \(TerminalText.quoted(path)): \(String(cString: strerror(errno)))")
    }
    do throws(TLSCode) {
      certificates = try TLSCertificates()
    } catch {
      throw ServerError("cannot serve HTTPS: \(error.message)")
    }
    do throws(TLSCode) {
      try certificates.present(certificate: files.certificate, key: files.key)
    } catch {
      throw ServerError(
        "cannot use the certificate \(TerminalText.quoted(files.certificate)) with the key "
          + "\(TerminalText.quoted(files.key)): \(error.message)",
        hint: "both PEM files: the certificate (its chain after it) and its unencrypted private key")
    }
  }
}
