import CGnuTLS

/// GnuTLS, loaded with `dlopen` the first time it is needed.
public enum TLSLibrary {
  /// Loads libgnutls.so.30 (once per process) and returns its version
  /// (`3.7.9`); throws `HTTPClientError.tls(_, .unavailable)` with the
  /// loader's reason. Safe from any thread. A program can call it to
  /// check that it can speak https:// at all (the static `msglog` loads
  /// the shared library at run time).
  @discardableResult
  public static func load() throws -> String {
    var error = [CChar](repeating: 0, count: 512)
    guard msglog_gnutls_load(&error, UInt(error.count)) == 0 else {
      let reason = String(decoding: error.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
      throw HTTPClientError.tls(origin: "", .unavailable(reason))
    }
    return gnutls_check_version(nil).map { String(cString: $0) } ?? "?"
  }

  /// Whether this process can run GnuTLS itself: not a static executable
  /// (see CGnuTLS's gnutls.c), which speaks TLS through a helper process.
  public static var canRunInProcess: Bool { msglog_gnutls_can_load() != 0 }

  /// GnuTLS's words for `code`, fit for a message.
  static func message(_ code: Int32) -> String {
    gnutls_strerror(code).map { lowercasedSentence(String(cString: $0)) } ?? "GnuTLS error \(code)"
  }
}
