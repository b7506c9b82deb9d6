/// Every failure a user can see, sorted into the classes SPEC.md gives exit codes to.
///
/// The command line turns a `MsglogError` into `msglog: <message>` on stderr and
/// the exit code of its `kind`, in one place; the library never prints.
public struct MsglogError: Error, Equatable, CustomStringConvertible, Sendable {
  public enum Kind: Sendable, Equatable {
    /// Malformed command line or argument (exit 64).
    case usage
    /// Refused or failed: the command was understood but cannot be done (exit 1).
    case refused
    /// `--expect-version` did not match (exit 75).
    case conflict
  }

  public var kind: Kind
  public var message: String
  /// A second line that tells the user what to do about it.
  public var hint: String?

  public init(_ kind: Kind, _ message: String, hint: String? = nil) {
    self.kind = kind
    self.message = message
    self.hint = hint
  }

  public static func usage(_ message: String, hint: String? = nil) -> MsglogError {
    MsglogError(.usage, message, hint: hint)
  }

  public static func refused(_ message: String, hint: String? = nil) -> MsglogError {
    MsglogError(.refused, message, hint: hint)
  }

  public var description: String { message }

  /// The same error with `prefix` in front of its message (`line 3: …`).
  public func prefixed(_ prefix: String) -> MsglogError {
    MsglogError(kind, prefix + message, hint: hint)
  }
}
