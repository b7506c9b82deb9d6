/// One consistent view of the log, lent to `EventLog.read`'s closure.
///
/// Everything read through one snapshot comes from the same point in the
/// log, however many writers commit meanwhile. It cannot be kept: it is
/// noncopyable and valid only inside the closure.
///
/// Errors are `MsglogError`s; the methods that take a closure also pass on
/// what the closure throws.
public struct LogSnapshot: ~Copyable {
  let reader: any LogReader

  init(reader: any LogReader) { self.reader = reader }

  /// Seq of the last event (0 for an empty log).
  public func headSeq() throws -> UInt64 { try translated { try reader.headSeq() } }

  /// Every stream with its counters, in bytewise order of the names.
  public func streams() throws -> [StreamCounters] {
    try translated { try CurrentView.streams(in: reader).map(StreamCounters.init) }
  }

  /// The stream's current items in order, one at a time: `list` of a
  /// million items holds one leaf of the order tree in memory, not the list.
  ///
  /// - Parameters:
  ///   - stream: the stream to list.
  ///   - header: called first, with the stream's counters (its `items` empty) and item count.
  ///   - body: called with each item and its index, in order.
  public func forEachItem(
    of stream: StreamName, header: (StreamContents, Int) throws -> Void = { _, _ in },
    _ body: (Int, Item) throws -> Void
  ) throws {
    try passingOn { try CurrentView.forEachItem(of: stream, in: reader, header: header, body) }
  }

  /// The stream's current items.
  public func items(of stream: StreamName) throws -> StreamContents {
    try translated { try CurrentView.stream(stream, in: reader) }
  }

  /// The stream rebuilt from the log as it was right after `seq`, or, with
  /// no seq, by a full replay up to the head.
  public func replay(_ stream: StreamName, at seq: UInt64? = nil) throws -> StreamContents {
    try translated { try Replay.stream(stream, at: seq, in: reader) }
  }

  /// The events from `seq` on, oldest first (only `stream`'s when given),
  /// until `body` returns false.
  public func forEachEvent(from seq: UInt64 = 1, stream: StreamName? = nil, _ body: (Event) throws -> Bool) throws {
    try passingOn {
      try reader.forEachEvent(from: max(seq, 1)) { event in
        if let stream, event.stream != stream { return true }
        return try body(event)
      }
    }
  }

  /// The change set from the stream as of seq `a` to the stream as of seq `b`.
  public func diff(_ stream: StreamName, from a: UInt64, to b: UInt64) throws -> StreamDiff {
    StreamDiff(from: try replay(stream, at: a), to: try replay(stream, at: b))
  }

  /// Checks every record, seq contiguity, the replay and every derived
  /// table, naming each problem once; `progress` is called now and then.
  public func verify(progress: ((VerifyProgress) -> Void)? = nil) throws -> VerifyReport {
    try translated { try Verifier.verify(reader, progress: progress) }
  }

  /// The store's own access, below the door: the benchmark's phase-by-phase
  /// diagnostics read through it.
  package var storeReader: any LogReader { reader }

  private func translated<R>(_ body: () throws -> R) throws(MsglogError) -> R {
    do { return try body() } catch { throw MsglogError(anyStoreFailure: error) }
  }

  /// For the methods that run a caller's closure: its errors pass through.
  private func passingOn<R>(_ body: () throws -> R) throws -> R {
    do { return try body() } catch { throw MsglogError(storeFailure: error) ?? error }
  }
}
