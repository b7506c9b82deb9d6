import CLibPQ

/// A failed PostgreSQL operation: the SQLSTATE (five characters, nil for a
/// failure on the client's side, such as a refused connection) and the
/// server's or libpq's message.
public struct PostgresError: Error, Equatable, Sendable, CustomStringConvertible {
  public var sqlState: String?
  public var message: String
  /// In a pipeline, which of its statements failed (from 0); nil otherwise.
  public var statement: Int?

  public init(sqlState: String?, message: String, statement: Int? = nil) {
    self.sqlState = sqlState
    self.message = message
    self.statement = statement
  }

  public var description: String { sqlState.map { "\(message) (SQLSTATE \($0))" } ?? message }

  public static let uniqueViolation = "23505"
  public static let undefinedTable = "42P01"
  public static let undefinedSchema = "3F000"
  public static let invalidCatalogName = "3D000"
  public static let invalidPassword = "28P01"
  public static let invalidAuthorization = "28000"
  public static let readOnlyTransaction = "25006"
  public static let insufficientPrivilege = "42501"
  public static let diskFull = "53100"
  public static let adminShutdown = "57P01"
  public static let cannotConnectNow = "57P03"
  /// What the server answers a copy its client abandoned with.
  public static let queryCanceled = "57014"
  /// A repeatable-read transaction met a row another committed after its
  /// snapshot: an optimistic write whose head moved.
  public static let serializationFailure = "40001"
  /// What the check of a write on what its process knew raises when the
  /// head row moved (`PostgresSchema.lockHead(ifAt:version:)`).
  public static let divisionByZero = "22012"

  /// Whether the connection is gone (its server went away or restarted).
  public var isConnectionLost: Bool {
    sqlState == nil || sqlState?.hasPrefix("08") == true || sqlState?.hasPrefix("57P") == true
  }
}

/// libpq, loaded on first use (see CLibPQ.h for why it is not linked).
enum LibPQ {
  /// Loads libpq.so.5 once per process; throws why it cannot be.
  static func load() throws(PostgresError) {
    var reason = [CChar](repeating: 0, count: 512)
    guard msglog_libpq_load(&reason, UInt(reason.count)) == 0 else {
      throw PostgresError(
        sqlState: nil, message: String(decoding: reason.prefix { $0 != 0 }.map(UInt8.init), as: UTF8.self))
    }
  }
}
