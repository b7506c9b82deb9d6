import MsglogCore

/// `trim`: history older than a horizon dropped on purpose, each stream's
/// list at the horizon kept as its base (docs/REFERENCE.md, "Forgetting on
/// purpose").
extension EventLog {
  /// What a trim did, or would do (`dryRun`).
  public struct Trim: Equatable, Sendable {
    /// Events taken out of history (or that would be): those from the
    /// log's last horizon to this one, which `log`, `export` and `replay
    /// --at` no longer show.
    public var trimmed: UInt64
    /// Of their records, those deleted; the others hold texts the bases
    /// read, and stay in the database under their own seqs.
    public var recordsDropped: UInt64
    /// The first seq kept: history begins here; the lists as of
    /// `horizon - 1` are the bases.
    public var horizon: UInt64
    /// The horizon asked for, when a later event needed the horizon lower
    /// (it brings back or erases an item removed before it); nil otherwise.
    public var lowered: UInt64?
  }

  /// Drops the events before seq `horizon`, keeping each stream's list as
  /// it was after seq `horizon - 1` as its base: every list, replay and
  /// diff from `horizon - 1` on stays exactly as it was; seqs and versions
  /// are never reused. One write transaction: done whole or not at all.
  /// A horizon at or before the log's present one trims nothing.
  ///
  /// - Throws: `MsglogError.seqBeyondHead` for a horizon past the head,
  ///   `.trimNotSupported` on a store that cannot trim, `.forgettingInReplica`
  ///   in a replica.
  @discardableResult
  public func trim(before horizon: UInt64, dryRun: Bool = false) throws -> Trim {
    if dryRun {
      // The log's own tables, not a replica's local view: a dry run is
      // refused where the trim would be.
      return try readingBase { try self.trimPlan(before: horizon, in: $0) }.trim
    }
    return try writing { writer in
      let (plan, trim) = try self.trimPlan(before: horizon, in: writer)
      guard let plan else { return trim }
      guard let dropped = try Self.apply(plan, to: writer) else {
        throw MsglogError.trimNotSupported(location: self.location)
      }
      return Trim(trimmed: trim.trimmed, recordsDropped: dropped, horizon: trim.horizon, lowered: trim.lowered)
    }
  }

  /// Trims as `plan` says, in the caller's write transaction; nil from a
  /// store that cannot. The retired items' id entries are first made what
  /// a rebuild from the base rows makes them (their remove and insert
  /// alone: a text seq there would name a record the trim drops), and the
  /// superseded inserts lose the text an edit replaced (`purge` then
  /// scrubs the old record's bytes with the rest).
  static func apply(_ plan: TrimPlan, to writer: any LogWriter) throws -> UInt64? {
    for item in plan.retired where try writer.idEntry(item.id) != item.entry {
      try writer.putIdEntry(item.entry, for: item.id)
    }
    for seq in plan.superseded {
      guard var insert = try writer.event(at: seq), case .insert(let id, let index, let text, let sender) = insert.op,
        !text.isEmpty
      else { continue }
      insert.op = .insert(id: id, index: index, text: "", sender: sender)
      try writer.replaceRecord(EventRecord.encode(insert, layout: writer.recordLayout), of: insert)
    }
    return try writer.trim(plan)
  }

  /// `trim(before:)` at the first event younger than `age` by the log's
  /// clock (times never go back in a log msglog wrote, so the first one
  /// found by halving); at the head when every event is older: never past it.
  @discardableResult
  public func trim(olderThan age: Duration, dryRun: Bool = false) throws -> Trim {
    let (seconds, attoseconds) = age.components
    let cutoff = configuration.clock().milliseconds - (seconds * 1000 + attoseconds / 1_000_000_000_000_000)
    let horizon = try reading { snapshot -> UInt64 in
      let reader = snapshot.reader
      let head = try reader.headSeq()
      var low = try reader.horizon().seq
      var high = head
      while low < high {
        let middle = low + (high - low) / 2
        guard let event = try reader.event(at: middle) else { break }
        if event.time.milliseconds < cutoff { low = middle + 1 } else { high = middle }
      }
      return low
    }
    return try trim(before: horizon, dryRun: dryRun)
  }

  /// The plan and what it comes to, refusing what cannot be trimmed.
  private func trimPlan(before asked: UInt64, in reader: any LogReader) throws -> (plan: TrimPlan?, trim: Trim) {
    if try replicaState(in: reader) != nil {
      throw MsglogError.forgettingInReplica(location: location, command: "trim")
    }
    guard store.kind != .memory else { throw MsglogError.trimNotSupported(location: location) }
    let head = try reader.headSeq()
    guard asked <= head else { throw MsglogError.seqBeyondHead(seq: asked, head: head) }
    let before = try reader.horizon()
    guard let plan = try TrimPlan.make(before: asked, in: reader) else {
      // Asked above the horizon, it was lowered to it or below: a later
      // event needs the history from there on.
      return (nil, Trim(trimmed: 0, recordsDropped: 0, horizon: before.seq, lowered: asked > before.seq ? asked : nil))
    }
    // Every record below the horizon that is still there, but those kept.
    let present = plan.horizon - 1 - before.droppedEvents
    let trim = Trim(
      trimmed: plan.horizon - before.seq,
      recordsDropped: present - UInt64(plan.kept.count), horizon: plan.horizon,
      lowered: plan.horizon < asked ? asked : nil)
    return (plan, trim)
  }
}
