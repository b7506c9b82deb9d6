import MsglogCore

extension EventLog {
  /// What `backup` copied.
  public struct BackupReport: Equatable, Sendable {
    /// The events in the copy.
    public var events: UInt64
    /// The copy is the log as of this seq (its head).
    public var seq: UInt64
    /// The size of the copy's data file.
    public var bytes: UInt64
  }

  /// Copies the log to a new LMDB directory at `destination` while writers
  /// go on: a complete msglog database equal to this one as of the seq it
  /// reports. `destination` must not exist; a backup cut short leaves
  /// nothing there. `compact` leaves out free pages (a smaller copy).
  ///
  /// Throws `.backupNotSupported` for a log on PostgreSQL (whose own
  /// tools, `pg_dump` and `pg_basebackup`, copy it), `.cannotBackUp` when
  /// `destination` exists.
  public func backup(to destination: String, compact: Bool = false) throws -> BackupReport {
    do {
      guard let copied = try store.copy(to: destination, compact: compact) else {
        throw MsglogError.backupNotSupported(location: location)
      }
      return BackupReport(events: copied.events, seq: copied.seq, bytes: copied.bytes)
    } catch {
      throw MsglogError(anyStoreFailure: error)
    }
  }
}
