/// One consistent view of the log, lent to `EventLog.read`'s closure.
///
/// Everything read through one snapshot comes from the same point in the
/// log, however many writers commit meanwhile. It cannot be kept: it is
/// noncopyable and valid only inside the closure.
///
/// Errors are `MsglogError`s; the methods that take a closure also pass on
/// what the closure throws.
///
/// In a replica the snapshot is of the local view (docs/SYNC.md): its
/// events with its pending changes on top. `headSeq`, `forEachEvent`,
/// `replay(_:at:)` with a seq and `verify` are of its events only; the
/// current items, the streams and a full replay are the local view's, an
/// item whose latest change is pending marked `pending` (seq 0 for a
/// pending insert); a seq equal to the replica's head stands for the local
/// view in `diff`.
public struct LogSnapshot: ~Copyable {
  /// What the snapshot shows: the log, or a replica's local view.
  let reader: any LogReader
  /// The log's own events and tables (the same as `reader` but in a replica).
  let base: any LogReader
  let view: LocalView?

  init(reader: any LogReader) {
    self.reader = reader
    self.base = reader
    self.view = nil
  }

  init(localView view: LocalView, base: any LogReader) {
    self.reader = view.overlay
    self.base = base
    self.view = view
  }

  /// Seq of the last event (0 for an empty log).
  public func headSeq() throws -> UInt64 { try translated { try base.headSeq() } }

  /// The local view's mark on an item read through it.
  private static func marked(_ item: Item, in view: LocalView?) -> Item {
    guard let view, view.pendingItems.contains(item.id) else { return item }
    var item = item
    item.pending = true
    if item.seq > view.baseHead { item.seq = 0 }
    return item
  }

  /// The local view's counters: the replica's last event, the view's version.
  private static func located(_ contents: StreamContents, in view: LocalView?) -> StreamContents {
    guard let view else { return contents }
    var contents = contents
    contents.seq = view.baseHead
    contents.items = contents.items.map { marked($0, in: view) }
    return contents
  }

  /// Every stream with its counters, in bytewise order of the names.
  public func streams() throws -> [StreamCounters] {
    try translated { try CurrentView.streams(in: reader).map(StreamCounters.init) }
  }

  /// What sync's bookkeeping holds in this log as a remote: the replicas
  /// that pushed to it, the outcomes kept, their bytes (a log that serves
  /// no replica: zeros).
  package func syncBookkeeping() throws -> SyncBookkeeping {
    try translated {
      guard let sync = base as? any SyncStateReader else { return SyncBookkeeping() }
      return try sync.syncBookkeeping()
    }
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
    let view = self.view
    try passingOn {
      try CurrentView.forEachItem(
        of: stream, in: reader, header: { contents, count in try header(Self.located(contents, in: view), count) },
        { index, item in try body(index, Self.marked(item, in: view)) })
    }
  }

  /// The stream's current items.
  public func items(of stream: StreamName) throws -> StreamContents {
    try translated { Self.located(try CurrentView.stream(stream, in: reader), in: view) }
  }

  /// The stream rebuilt from the log as it was right after `seq`, or, with
  /// no seq, by a full replay up to the head.
  public func replay(_ stream: StreamName, at seq: UInt64? = nil) throws -> StreamContents {
    try translated {
      guard let view else { return try Replay.stream(stream, at: seq, in: reader) }
      guard let seq else { return Self.located(try Replay.stream(stream, at: nil, in: reader), in: view) }
      guard seq <= view.baseHead else { throw MsglogError.seqBeyondHead(seq: seq, head: view.baseHead) }
      return try Replay.stream(stream, at: seq, in: base)
    }
  }

  /// The first seq of the log's history: 1, or where `trim` made it begin.
  public func historyBegins() throws -> UInt64 { try translated { try base.horizon().seq } }

  /// Where a reader of every event from `seq` on begins, refusing what a
  /// `trim` dropped (`MsglogError.historyTrimmed`): at `seq`; or, when
  /// `seq` is the one before the horizon and was asked for (`--from`, a
  /// `from` parameter: the list there is a base, `log --from` of it is
  /// what comes after), at the horizon. A seq a reader comes to on its own
  /// (the one after the last it handed out, after `Last-Event-ID`) must
  /// be there: a reader short of the horizon missed the event before it.
  public func firstEvent(from seq: UInt64, asked: Bool) throws -> UInt64 {
    let begins = try historyBegins()
    if seq >= begins { return seq }
    if asked && seq + 1 == begins { return begins }
    throw MsglogError.historyTrimmed(horizon: begins)
  }

  /// Refuses to read history from `seq` on when a `trim` dropped it:
  /// below the seq before the horizon (`MsglogError.historyTrimmed`).
  public func checkHistory(from seq: UInt64) throws {
    try translated { try base.horizon().check(listAfter: seq) }
  }

  /// The events from `seq` on, oldest first (only `stream`'s when given),
  /// until `body` returns false. In a trimmed log, from its horizon at the
  /// earliest (`checkHistory(from:)` says whether that skips any).
  public func forEachEvent(from seq: UInt64 = 1, stream: StreamName? = nil, _ body: (Event) throws -> Bool) throws {
    try passingOn {
      try base.forEachEvent(from: max(seq, 1)) { event in
        if let stream, event.stream != stream { return true }
        return try body(event)
      }
    }
  }

  /// What `event` (one this log holds, at or before the snapshot) does to
  /// its stream's list, with `Int` positions and the whole item of an
  /// insert, an edit or a restore (`ItemChange`): one read for an edit or a
  /// restore, none for the others.
  public func change(for event: Event) throws -> ItemChange {
    try translated { try ItemChange(event, in: base) }
  }

  /// The change set from the stream as of seq `a` to the stream as of seq `b`.
  public func diff(_ stream: StreamName, from a: UInt64, to b: UInt64) throws -> StreamDiff {
    func side(_ seq: UInt64) throws -> StreamContents {
      if let view, seq == view.baseHead { return try items(of: stream) }
      return try replay(stream, at: seq)
    }
    return StreamDiff(from: try side(a), to: try side(b))
  }

  /// Checks every record, seq contiguity, the replay and every derived
  /// table, naming each problem once; `progress` is called now and then.
  public func verify(progress: ((VerifyProgress) -> Void)? = nil) throws -> VerifyReport {
    try translated { try Verifier.verify(base, progress: progress) }
  }

  /// The store's own access, below the door: the benchmark's phase-by-phase
  /// diagnostics read through it.
  package var storeReader: any LogReader { base }

  /// The replica's local view, when the snapshot is of one.
  package var localView: LocalView? { view }

  /// In a replica, the pending changes that apply to the local view, in
  /// order, as the events they are there (`log` shows them after the
  /// events): each with its number and, for an undo of another pending
  /// change, that change's number.
  package func forEachPendingEvent(
    stream: StreamName? = nil, _ body: (_ change: UInt64, _ event: Event, _ undoesChange: UInt64?) throws -> Void
  ) throws {
    guard let view else { return }
    try passingOn {
      try reader.forEachEvent(from: view.baseHead + 1) { event in
        guard let number = view.changeOfSeq[event.seq] else { return true }
        if let stream, event.stream != stream { return true }
        try body(number, event, event.undoes.flatMap { $0 > view.baseHead ? view.changeOfSeq[$0] : nil })
        return true
      }
    }
  }

  func translated<R>(_ body: () throws -> R) throws(MsglogError) -> R {
    do { return try body() } catch { throw MsglogError(anyStoreFailure: error) }
  }

  /// For the methods that run a caller's closure: its errors pass through.
  func passingOn<R>(_ body: () throws -> R) throws -> R {
    do { return try body() } catch { throw MsglogError(storeFailure: error) ?? error }
  }
}
