/// Why the server did not start: a setting that makes no sense (a usage
/// error for the command line, exit 64) or a failure of the system (exit 1).
package struct ServerError: Error, Equatable, Sendable {
  package var message: String
  package var hint: String?
  /// The settings were wrong, rather than the system failing.
  package var isUsage: Bool

  package init(_ message: String, hint: String? = nil, isUsage: Bool = false) {
    self.message = message
    self.hint = hint
    self.isUsage = isUsage
  }

  package static func usage(_ message: String, hint: String? = nil) -> ServerError {
    ServerError(message, hint: hint, isUsage: true)
  }
}
