/// One stream of a log, named once: every write, read and follow of that
/// list, with no stream label to repeat (GRDB's one door, one handle).
///
///     let board = log.stream("board")
///     try board.append("Ship it")
///     try board.move(from: 0, to: 1)
///     for item in try board.items().items { print(item.text) }
///
/// A handle is a value: the log and a name. Making one reads nothing and
/// creates nothing; any number of them may name the same stream, from any
/// thread. Each method is the `EventLog` method of the same name with the
/// stream filled in (`append(_:sender:id:to:expectVersion:)` and the
/// others), with the same errors, outcomes and transactions.
///
/// ## Topics
///
/// ### Writing
///
/// - ``append(_:sender:id:expectVersion:)``
/// - ``append(contentsOf:expectVersion:progress:)``
/// - ``insert(_:at:sender:id:expectVersion:rebase:)``
/// - ``insert(contentsOf:at:expectVersion:rebase:progress:)``
/// - ``move(from:to:expectVersion:rebase:)``
/// - ``remove(_:expectVersion:rebase:)``
/// - ``remove(id:expectVersion:rebase:)``
/// - ``edit(_:text:sender:expectVersion:rebase:)``
/// - ``edit(id:text:sender:expectVersion:rebase:)``
/// - ``restore(_:at:expectVersion:)``
/// - ``restore(id:at:expectVersion:)``
/// - ``undo(_:sender:expectVersion:)``
///
/// ### Reading
///
/// - ``items()``
/// - ``replay(at:)``
/// - ``diff(from:to:)``
/// - ``events(from:limit:)``
/// - ``export(_:)``
///
/// ### Following
///
/// - ``updates(from:)``
/// - ``changes(from:)``
/// - ``follow(from:)``
/// - ``follow(from:stop:notices:_:)``
public struct LogStream: Sendable {
  /// The log the stream is in.
  public let log: EventLog
  /// The stream's name.
  public let name: StreamName

  /// A handle on stream `name` of `log` (`log.stream(name)`): reads
  /// and creates nothing.
  public init(_ name: StreamName, of log: EventLog) {
    self.log = log
    self.name = name
  }

  // MARK: - Writing

  /// Appends a message at the end of the stream.
  @discardableResult
  public func append(_ text: String, sender: String? = nil, id: ItemID? = nil, expectVersion: UInt64? = nil)
    throws -> Outcome
  {
    try log.append(text, sender: sender, id: id, to: name, expectVersion: expectVersion)
  }

  /// Appends messages in order, all in one transaction.
  @discardableResult
  public func append(
    contentsOf items: [NewItem], expectVersion: UInt64? = nil, progress: ((Int, Int) -> Void)? = nil
  ) throws -> [Outcome] {
    try log.append(contentsOf: items, to: name, expectVersion: expectVersion, progress: progress)
  }

  /// Inserts a message so that it ends at `index` (0…count); with `rebase`,
  /// as `EventLog.insert(_:at:sender:id:into:expectVersion:rebase:)`.
  @discardableResult
  public func insert(
    _ text: String, at index: Int, sender: String? = nil, id: ItemID? = nil, expectVersion: UInt64? = nil,
    rebase: Bool = false
  ) throws -> Outcome {
    try log.insert(text, at: index, sender: sender, id: id, into: name, expectVersion: expectVersion, rebase: rebase)
  }

  /// Inserts messages at `index`, `index + 1`, …, all in one transaction.
  @discardableResult
  public func insert(
    contentsOf items: [NewItem], at index: Int, expectVersion: UInt64? = nil, rebase: Bool = false,
    progress: ((Int, Int) -> Void)? = nil
  ) throws -> [Outcome] {
    try log.insert(
      contentsOf: items, at: index, into: name, expectVersion: expectVersion, rebase: rebase, progress: progress)
  }

  /// Moves the item at `from` so that it ends at `to` (a drag); nil, and
  /// nothing appended, when `from == to`.
  @discardableResult
  public func move(from: Int, to: Int, expectVersion: UInt64? = nil, rebase: Bool = false) throws -> Outcome? {
    try log.move(from: from, to: to, in: name, expectVersion: expectVersion, rebase: rebase)
  }

  /// Removes a live item, named by its id or a unique prefix of 8+ characters.
  @discardableResult
  public func remove(_ item: ItemSelector, expectVersion: UInt64? = nil, rebase: Bool = false) throws -> Outcome {
    try log.remove(item, from: name, expectVersion: expectVersion, rebase: rebase)
  }

  /// Removes the live item with this id.
  @discardableResult
  public func remove(id: ItemID, expectVersion: UInt64? = nil, rebase: Bool = false) throws -> Outcome {
    try log.remove(.id(id), from: name, expectVersion: expectVersion, rebase: rebase)
  }

  /// Gives a live item new text; nil, and nothing appended, when it has
  /// this text already. `sender` is who edited.
  @discardableResult
  public func edit(
    _ item: ItemSelector, text: String, sender: String? = nil, expectVersion: UInt64? = nil, rebase: Bool = false
  ) throws -> Outcome? {
    try log.edit(item, text: text, sender: sender, in: name, expectVersion: expectVersion, rebase: rebase)
  }

  /// Gives the live item with this id new text (as `edit(_:text:…)`).
  @discardableResult
  public func edit(
    id: ItemID, text: String, sender: String? = nil, expectVersion: UInt64? = nil, rebase: Bool = false
  ) throws -> Outcome? {
    try log.edit(.id(id), text: text, sender: sender, in: name, expectVersion: expectVersion, rebase: rebase)
  }

  /// Brings a removed item back: at `index`, or after its predecessor when nil.
  @discardableResult
  public func restore(_ item: ItemSelector, at index: Int? = nil, expectVersion: UInt64? = nil) throws -> Outcome {
    try log.restore(item, at: index, in: name, expectVersion: expectVersion)
  }

  /// Brings the removed item with this id back (as `restore(_:at:…)`).
  @discardableResult
  public func restore(id: ItemID, at index: Int? = nil, expectVersion: UInt64? = nil) throws -> Outcome {
    try log.restore(.id(id), at: index, in: name, expectVersion: expectVersion)
  }

  /// Undoes event `seq` of the stream, or its latest undoable event when
  /// nil; nil, and nothing appended, when the undoing changes nothing.
  /// `sender`, who undid, is named on an edit's undoing.
  @discardableResult
  public func undo(_ seq: UInt64? = nil, sender: String? = nil, expectVersion: UInt64? = nil) throws -> Outcome? {
    try log.undo(seq, in: name, sender: sender, expectVersion: expectVersion)
  }

  // MARK: - Reading

  /// The stream's current items, with its version and seq (none at version
  /// 0 before the first write).
  public func items() throws -> StreamContents { try log.items(of: name) }

  /// The stream as it was right after `seq` (nil: a full replay to the head).
  public func replay(at seq: UInt64? = nil) throws -> StreamContents { try log.replay(name, at: seq) }

  /// The change set from the stream as of seq `a` to the stream as of seq `b`.
  public func diff(from a: UInt64, to b: UInt64) throws -> StreamDiff { try log.diff(name, from: a, to: b) }

  /// The stream's events from seq `seq` of the log on, at most `limit`.
  public func events(from seq: UInt64 = 1, limit: Int = .max) throws -> [Event] {
    try log.events(from: seq, limit: limit, stream: name)
  }

  /// The stream's events, oldest first; what `body` throws passes through.
  public func export(_ body: (Event) throws -> Void) throws { try log.export(stream: name, body) }

  // MARK: - Following

  /// The stream's events from `seq` on (nil: those committed after the
  /// iteration starts) as they commit; ends when the task is cancelled.
  public func follow(from seq: UInt64? = nil) -> AsyncThrowingStream<Event, any Error> {
    log.follow(from: seq, stream: name)
  }

  /// Calls `body` with each of the stream's events as it commits, until
  /// `body` returns false or a `stop` descriptor signals.
  public func follow(
    from seq: UInt64? = nil, stop: [FollowStop] = [], notices: ((FollowNotice) -> Void)? = nil,
    _ body: (Event) throws -> Bool
  ) throws {
    try log.follow(from: seq, stream: name, stop: stop, notices: notices, body)
  }
}

extension EventLog {
  /// The stream named `name`, as a handle whose methods need no stream
  /// label: `log.stream("board").append("Ship it")`.
  public func stream(_ name: StreamName = .main) -> LogStream { LogStream(name, of: self) }
}
