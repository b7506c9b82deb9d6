/// Why a backup's destination cannot be used.
public enum BackupRefusal: Equatable, Sendable, CustomStringConvertible {
  /// Something is at the path already: a backup goes to a new one.
  case exists
  /// Something was put at the path while the copy was made.
  case appeared
  /// The path lies inside the database's own directory, where the copy
  /// would become part of what it copies (and what sweeps it would sweep).
  case insideDatabase
  /// The copy cannot be made there (its parent directory is missing, or
  /// may not be written): why.
  case cannotCreate(String)

  public var description: String {
    switch self {
    case .exists: return "it exists already (a backup goes to a new path)"
    case .appeared: return "it appeared while the copy was made"
    case .insideDatabase: return "it is inside the database's own directory"
    case .cannotCreate(let reason): return reason
    }
  }
}
