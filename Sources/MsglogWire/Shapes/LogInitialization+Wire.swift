import Msglog

extension JSONWriter {
  /// `init --json`: where, whether an empty log was made there, and the
  /// tables made for a log of an older msglog (none when it was ready).
  ///
  ///     {"location":"postgres://owner@db/team","created":false,"tables":["msglog.replicas","msglog.sync_outcomes"]}
  package mutating func logInitialization(_ result: LogInitialization, location: String) {
    beginObject()
    member("location", location)
    member("created", result == .created)
    key("tables")
    array { writer in
      if case .madeTables(let tables) = result { for table in tables { writer.value(table) } }
    }
    endObject()
  }
}
