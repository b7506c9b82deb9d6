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
  public func repair() throws -> RepairReport {
    let repaired: [String] = try writing { writer in
      let before = try Verifier.verify(writer)
      if before.isClean { return [] }
      guard before.logIsIntact else { throw MsglogError.unrepairable(problems: before.problems) }
      try DerivedState.rebuild(writer, checkpointInterval: UInt64(configuration.checkpointInterval))
      let after = try Verifier.verify(writer)
      guard after.isClean else {
        throw MsglogError.storage("the rebuild did not verify: \(after.problems.first ?? "")")
      }
      return before.problems
    }
    return RepairReport(repaired: repaired, after: try verify())
  }
}
