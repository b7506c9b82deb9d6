extension EventLog {
  /// A stream's list as the app shows it, kept live: from `shown` — the
  /// list `items(of:)` gave, which the app shows — each update that turns
  /// it into the list as it is now, as the log changes:
  ///
  ///     let chat = log.stream("chat")
  ///     var shown = try chat.items()
  ///     for try await update in chat.updates(from: shown) {
  ///       update.apply(to: &shown)  // what chat.items() gives now
  ///     }
  ///
  /// In a replica the list is its local view, and so are the updates:
  /// a pending write shows where the user made it, the moment it is made;
  /// a sync that confirms it brings an `update` of that item (its seq and
  /// time now the remote's, `pending` false), never a second copy; a
  /// pending change the remote refused comes undone; what others wrote
  /// arrives where the remote put it. (`changes(from:stream:)` is of the
  /// log's events only: in a replica it leaves the pending writes out and
  /// counts positions in a list the app does not show.)
  ///
  /// Woken by the store, as `follow` is — by this process's writes and
  /// syncs and by any other process's — never by a timer; each update is
  /// one state of the list, read when the consumer asks for the next (a
  /// slow consumer gets fewer, larger updates, never a backlog). Reading
  /// and waiting take a thread of their own, not one of the shared pool's:
  /// the loop may run on the main actor. Ends when the consuming task is
  /// cancelled; a store that goes away (a PostgreSQL connection) is waited
  /// for, as by `follow`.
  public func updates(from shown: StreamContents) -> AsyncThrowingStream<ListUpdate, any Error> {
    let follower = ListFollower(log: self, from: shown)
    return AsyncThrowingStream(unfolding: { try await follower.next() })
  }
}

extension LogStream {
  /// The stream's list as the app shows it, kept live from `shown`, what
  /// `items()` gave (`EventLog.updates(from:)`). A list of another
  /// stream ends the updates at once with `MsglogError.invalidInput`.
  public func updates(from shown: StreamContents) -> AsyncThrowingStream<ListUpdate, any Error> {
    guard shown.stream == name else {
      let mistake = MsglogError.invalidInput(
        .write(
          "updates of stream \(TerminalText.quoted(name)) were asked from a list of stream "
            + TerminalText.quoted(shown.stream)))
      return AsyncThrowingStream { $0.finish(throwing: mistake) }
    }
    return log.updates(from: shown)
  }
}
