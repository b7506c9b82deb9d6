extension EventLog {
  /// Makes the log's place ready, with no event: an empty log where there
  /// is none — an LMDB directory, or on PostgreSQL schema `msglog` with
  /// every table the log may need, owned by the role that runs it — and,
  /// for a PostgreSQL log made by an older msglog, the tables it lacks.
  /// Safe to call again: a log that is ready is left as it is.
  ///
  /// Nothing else needs it (a first write makes the log too); it is for
  /// an operator who sets the log up as one role and grants others their
  /// privileges on its tables (docs/POSTGRES.md, "The team recipe").
  ///
  /// Throws `.missingTables` when the tables of an older msglog's log are
  /// behind and this role does not own schema `msglog`, and
  /// `.permissionDenied` when it may not make the schema.
  public func initialize() throws -> LogInitialization {
    guard configuration.access == .readWrite else {
      throw MsglogError.readOnly(location: location, store: store.kind, reason: "opened for reading only")
    }
    do {
      return try store.initialize()
    } catch {
      throw MsglogError(anyStoreFailure: error)
    }
  }
}
