extension EventLog {
  /// What `repair` found and did.
  public struct RepairReport: Equatable, Sendable {
    /// The problems found before the rebuild (empty: nothing to do).
    public var repaired: [String]
    /// The check after it.
    public var after: VerifyReport
  }

  /// Rebuilds every derived table from the events, in one write
  /// transaction, when verify finds them wrong; the events are never
  /// changed. Throws `.unrepairable` when the log itself is damaged.
  /// `progress` is called now and then, through each stage.
  public func repair(progress: ((VerifyProgress) -> Void)? = nil) throws -> RepairReport {
    let (repaired, clean): ([String], VerifyReport?) = try writing { writer in
      let before = try Verifier.verify(writer, progress: progress)
      // Nothing to rebuild: that check is the report.
      if before.isClean { return ([], before) }
      guard before.logIsIntact else { throw MsglogError.unrepairable(problems: before.problems) }
      try DerivedState.rebuild(
        writer, checkpointInterval: UInt64(configuration.checkpointInterval), progress: progress)
      let after = try Verifier.verify(writer, progress: progress)
      guard after.isClean else {
        throw MsglogError.rebuildDidNotVerify(problem: after.problems.first ?? "")
      }
      return (before.problems, nil)
    }
    return RepairReport(repaired: repaired, after: try clean ?? verify(progress: progress))
  }
}
