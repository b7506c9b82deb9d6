/// A stream's counters: what `streams` lists.
public struct StreamSummary: Equatable, Sendable {
  public var stream: StreamName
  /// Live items.
  public var count: UInt64
  /// The stream's event count.
  public var version: UInt64
  /// Seq of the stream's last event (0 before its first).
  public var lastSeq: UInt64

  public init(stream: StreamName, count: UInt64, version: UInt64, lastSeq: UInt64) {
    self.stream = stream
    self.count = count
    self.version = version
    self.lastSeq = lastSeq
  }

  init(_ head: StreamHead) {
    self.init(stream: head.stream, count: head.count, version: head.version, lastSeq: head.lastSeq)
  }
}

/// One consistent view of the log, lent to `EventLog.read`'s closure.
///
/// Everything read through one snapshot comes from the same point in the
/// log, however many writers commit meanwhile. It cannot be kept: it is
/// noncopyable and valid only inside the closure.
public struct LogSnapshot: ~Copyable {
  let reader: any LogReader

  init(reader: any LogReader) { self.reader = reader }

  /// Seq of the last event (0 for an empty log).
  public func headSeq() throws -> UInt64 { try reader.headSeq() }

  /// Every stream with its counters, in bytewise order of the names.
  public func streams() throws -> [StreamSummary] {
    try CurrentView.streams(in: reader).map(StreamSummary.init)
  }

  /// The stream's current items in order, one at a time: `list` of a
  /// million items holds one leaf of the order tree in memory, not the list.
  ///
  /// - Parameters:
  ///   - header: called first, with the stream's counters (its `items` empty) and item count.
  public func forEachItem(
    of stream: StreamName, header: (StreamSnapshot, Int) throws -> Void = { _, _ in },
    _ body: (Int, Item) throws -> Void
  ) throws {
    try CurrentView.forEachItem(of: stream, in: reader, header: header, body)
  }

  /// The stream's current items.
  public func items(of stream: StreamName) throws -> StreamSnapshot {
    try CurrentView.stream(stream, in: reader)
  }

  /// The stream rebuilt from the log as it was right after `seq`, or, with
  /// no seq, by a full replay up to the head.
  public func replay(_ stream: StreamName, at seq: UInt64? = nil) throws -> StreamSnapshot {
    try Replay.stream(stream, at: seq, in: reader)
  }

  /// The events from `seq` on, oldest first (only `stream`'s when given),
  /// until `body` returns false.
  public func forEachEvent(from seq: UInt64 = 1, stream: StreamName? = nil, _ body: (Event) throws -> Bool) throws {
    try reader.forEachEvent(from: max(seq, 1)) { event in
      if let stream, event.stream != stream { return true }
      return try body(event)
    }
  }

  /// The change set from the stream as of seq `a` to the stream as of seq `b`.
  public func diff(_ stream: StreamName, from a: UInt64, to b: UInt64) throws -> StreamDiff {
    StreamDiff(from: try replay(stream, at: a), to: try replay(stream, at: b))
  }

  /// Checks everything: see `Verifier`.
  public func verify() throws -> Verifier.Report { try Verifier.verify(reader) }

  /// The store's own access, for the benchmark's phase-by-phase diagnostics.
  @_spi(Benchmarks) public var storeReader: any LogReader { reader }
}

extension EventLog {
  /// Seq of the last event (0 for an empty log).
  public func headSeq() throws -> UInt64 { try read { try $0.headSeq() } }

  /// Every stream with its counters.
  public func streams() throws -> [StreamSummary] { try read { try $0.streams() } }

  /// The stream's current items (use `read` and `forEachItem` for a long stream).
  public func items(of stream: StreamName = .main) throws -> StreamSnapshot { try read { try $0.items(of: stream) } }

  /// The stream as it was right after `seq` (nil: a full replay to the head).
  public func replay(_ stream: StreamName = .main, at seq: UInt64? = nil) throws -> StreamSnapshot {
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
  public func verify() throws -> Verifier.Report { try read { try $0.verify() } }

  /// What `repair` found and did.
  public struct RepairReport: Equatable, Sendable {
    /// The problems found before the rebuild (empty: nothing to do).
    public var repaired: [String]
    /// The check after it.
    public var after: Verifier.Report
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
