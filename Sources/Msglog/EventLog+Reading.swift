extension EventLog {
  /// Seq of the last event (0 for an empty log).
  public func headSeq() throws -> UInt64 { try read { try $0.headSeq() } }

  /// Every stream with its counters.
  public func streams() throws -> [StreamCounters] { try read { try $0.streams() } }

  /// The stream's current items (use `read` and `forEachItem` for a long stream).
  public func items(of stream: StreamName = .main) throws -> StreamContents { try read { try $0.items(of: stream) } }

  /// The stream as it was right after `seq` (nil: a full replay to the head).
  public func replay(_ stream: StreamName = .main, at seq: UInt64? = nil) throws -> StreamContents {
    try read { try $0.replay(stream, at: seq) }
  }

  /// The events from `seq` on, at most `limit` of them, only `stream`'s when given.
  public func events(from seq: UInt64 = 1, limit: Int = .max, stream: StreamName? = nil) throws -> [Event] {
    try read { snapshot in
      var events: [Event] = []
      guard limit > 0 else { return events }
      try snapshot.forEachEvent(from: seq, stream: stream) {
        events.append($0)
        return events.count < limit
      }
      return events
    }
  }

  /// Every event (only `stream`'s when given), oldest first, as `export` writes them.
  public func export(stream: StreamName? = nil, _ body: (Event) throws -> Void) throws {
    try read { snapshot in
      try snapshot.forEachEvent(stream: stream) {
        try body($0)
        return true
      }
    }
  }

  /// The change set from the stream as of seq `a` to the stream as of seq `b`.
  public func diff(_ stream: StreamName = .main, from a: UInt64, to b: UInt64) throws -> StreamDiff {
    try read { try $0.diff(stream, from: a, to: b) }
  }

  /// Checks every record, seq contiguity, the replay and every derived table.
  public func verify() throws -> VerifyReport { try read { try $0.verify() } }

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
    let repaired: [String] = try store.write { writer in
      let before = try Verifier.verify(writer)
      if before.isClean { return [] }
      guard before.logIsIntact else { throw MsglogError.unrepairable(problems: before.problems) }
      try DerivedState.rebuild(writer, checkpointInterval: checkpointInterval)
      let after = try Verifier.verify(writer)
      guard after.isClean else {
        throw MsglogError.storage("the rebuild did not verify: \(after.problems.first ?? "")")
      }
      return before.problems
    }
    return RepairReport(repaired: repaired, after: try verify())
  }
}
