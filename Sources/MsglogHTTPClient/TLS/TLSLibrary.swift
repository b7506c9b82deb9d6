import MsglogTLS

/// GnuTLS, loaded with `dlopen` the first time it is needed.
package enum TLSLibrary {
  /// Loads libgnutls.so.30 (once per process) and returns its version
  /// (`3.7.9`); throws `HTTPClientError.tls(_, .unavailable)` with the
  /// loader's reason. Safe from any thread. A program can call it to
  /// check that it can speak https:// at all (the static `msglog` loads
  /// the shared library at run time).
  @discardableResult
  package static func load() throws -> String {
    do throws(GnuTLS.Unavailable) {
      return try GnuTLS.load()
    } catch {
      throw HTTPClientError.tls(origin: "", .unavailable(error.reason))
    }
  }

  /// Whether this process can run GnuTLS itself: not a static executable
  /// (see CGnuTLS's gnutls.c), which speaks TLS through a helper process.
  package static var canRunInProcess: Bool { GnuTLS.canRunInProcess }
}
