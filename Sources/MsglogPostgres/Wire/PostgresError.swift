import CLibPQ

/// A failed PostgreSQL operation: the SQLSTATE (five characters, nil for a
/// failure on the client's side, such as a refused connection) and the
/// server's or libpq's message.
package struct PostgresError: Error, Equatable, Sendable, CustomStringConvertible {
  package var sqlState: String?
  package var message: String
  /// In a pipeline, which of its statements failed (from 0); nil otherwise.
  package var statement: Int?

  package init(sqlState: String?, message: String, statement: Int? = nil) {
    self.sqlState = sqlState
    self.message = message
    self.statement = statement
  }

  package var description: String { sqlState.map { "\(message) (SQLSTATE \($0))" } ?? message }

  package static let uniqueViolation = "23505"
  package static let undefinedTable = "42P01"
  package static let undefinedSchema = "3F000"
  package static let invalidCatalogName = "3D000"
  package static let invalidPassword = "28P01"
  package static let invalidAuthorization = "28000"
  package static let readOnlyTransaction = "25006"
  package static let insufficientPrivilege = "42501"
  package static let diskFull = "53100"
  package static let adminShutdown = "57P01"
  package static let cannotConnectNow = "57P03"
  /// What the server answers a copy its client abandoned with.
  package static let queryCanceled = "57014"
  package static let lockNotAvailable = "55P03"
  /// A repeatable-read transaction met a row another committed after its
  /// snapshot: an optimistic write whose head moved.
  package static let serializationFailure = "40001"
  /// What a hot standby also cancels a read with when the read holds up
  /// the changes it replays (a recovery conflict over a buffer pin).
  package static let deadlockDetected = "40P01"
  /// What the check of a write on what its process knew raises when the
  /// head row moved (`PostgresSchema.lockHead(ifAt:version:)`).
  package static let divisionByZero = "22012"

  /// Whether a read was cancelled by a hot standby replaying its
  /// primary's changes (a recovery conflict). Only for a statement of a
  /// read-only snapshot, which a primary never cancels so: in a write, the
  /// same codes are an optimistic write's head that moved.
  package var isRecoveryConflictOnRead: Bool {
    sqlState == Self.serializationFailure || sqlState == Self.deadlockDetected
  }

  /// Whether the connection is gone (its server went away or restarted).
  package var isConnectionLost: Bool {
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
