extension EventLog {
  /// The changes of `stream`'s list from seq `seq` on (nil: those committed
  /// after the iteration starts), as they commit: `follow(from:stream:)`
  /// with each event read as an `ItemChange` — `Int` positions, and the
  /// item a restore brings back or an edit changes, text and all — ready
  /// to apply to a live list:
  ///
  ///     let board = log.stream("board")
  ///     var items = try board.items()
  ///     for try await change in board.changes(from: items.seq + 1) {
  ///       change.apply(to: &items.items)
  ///     }
  ///
  /// An edit or a restore costs one more read (its text's record); the
  /// others none. Ends when the consuming task is cancelled.
  ///
  /// These are the log's events: in a replica, those the remote has done,
  /// with positions in that list — not the local view the user sees, whose
  /// pending writes they leave out (and bring as inserts when a sync
  /// confirms them). A list on screen follows `updates(from:)`.
  public func changes(from seq: UInt64? = nil, stream: StreamName = .main)
    -> AsyncThrowingStream<ItemChange, any Error>
  {
    let follower = LogFollower(log: self, from: seq, stream: stream)
    return AsyncThrowingStream(unfolding: { [self] in
      guard let event = try await follower.next() else { return nil }
      return try change(for: event)
    })
  }

  /// What `event` does to its stream's list (`LogSnapshot.change(for:)`),
  /// reading the log only for an edit or a restore.
  public func change(for event: Event) throws -> ItemChange {
    if let change = ItemChange.withoutReading(event) { return change }
    return try read { try $0.change(for: event) }
  }
}

extension LogStream {
  /// The stream's list changes from `seq` on, as they commit
  /// (`EventLog.changes(from:stream:)`).
  public func changes(from seq: UInt64? = nil) -> AsyncThrowingStream<ItemChange, any Error> {
    log.changes(from: seq, stream: name)
  }
}
