/// What a log is opened for.
public enum LogAccess: Sendable {
  /// Reads and writes; the first successful write creates a missing
  /// database. A database that may only be read still serves reads.
  case readWrite
  /// Reads only: never creates anything and needs no write permission.
  case readOnly
}
