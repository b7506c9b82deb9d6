import MsglogCore

extension EventLog {
  /// Whether the LMDB database this log opened has been removed or replaced
  /// at its path since: a server then refuses writes rather than acknowledge
  /// them into a deleted file. Always false on PostgreSQL and in memory.
  package var isDisplaced: Bool { store.isDisplaced }
}
