import MsglogCore

extension EventLog {
  /// Whether the log is read from a PostgreSQL hot standby: a replica that
  /// answers reads (also once it lost its primary) and refuses writes.
  /// Always false on LMDB.
  package func isStandby() throws -> Bool {
    try store.isStandby()
  }
}
