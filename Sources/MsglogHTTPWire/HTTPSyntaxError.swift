/// A message that breaks RFC 9112's syntax or a bound on its size: what is
/// wrong, in words, and which fault it is, for the layer that knows whom to
/// blame (the server answers a request with a status by its fault; the
/// client names a malformed answer).
package struct HTTPSyntaxError: Error, Equatable, Sendable {
  /// What kind of wrong, which decides a server's status.
  package enum Fault: Sendable, Equatable {
    /// Bytes the grammar does not allow (a server's 400).
    case malformed
    /// The request or status line is over its bound (414).
    case startLineTooLong
    /// The header section is over its bound in bytes or fields (431).
    case fieldsTooLarge
    /// An HTTP version other than 1.1 or 1.0 (505).
    case versionNotServed
    /// A chunked body over the body's bound (413).
    case bodyTooLarge
  }

  package let reason: String
  package let fault: Fault

  package init(_ reason: String, fault: Fault = .malformed) {
    self.reason = reason
    self.fault = fault
  }
}
