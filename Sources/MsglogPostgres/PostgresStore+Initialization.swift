import MsglogCore

extension PostgresStore {
  /// `msglog init`: schema msglog with every table the log may need,
  /// made as a first write makes it (in one transaction, by the role that
  /// will own them all), or the tables a log made by an older msglog
  /// lacks, made by the schema's owner (another role is refused, naming
  /// them); nothing when the log has them all. Appends no event.
  package func initialize() throws -> LogInitialization {
    try write(reserving: 0, touching: []) { writer in
      let access = writer as! Access
      if access.state.createsSchema { return .created }
      let made = try access.bringTablesUp()
      return made.isEmpty ? .ready : .madeTables(made)
    }
  }
}
