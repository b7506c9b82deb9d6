import MsglogPostgres

extension EventLog {
  /// Whether the log is read from a PostgreSQL hot standby: a replica that
  /// answers reads (also once it lost its primary) and refuses writes.
  /// Always false on LMDB.
  package func isStandby() throws -> Bool {
    guard let postgres = store as? PostgresStore else { return false }
    return try postgres.isStandby()
  }
}
