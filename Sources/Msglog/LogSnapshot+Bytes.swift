/// The current and replayed items lent as their records' bytes, for a
/// reader that writes each out at once (`list`, `replay` on the command
/// line): no `Item` is made where the store's records stay mapped.
extension LogSnapshot {
  /// `forEachItem(of:header:_:)`, each item lent as bytes.
  package func forEachItemBytes(
    of stream: StreamName, header: (StreamContents, Int) throws -> Void = { _, _ in },
    _ body: (Int, ItemBytes) throws -> Void
  ) throws {
    guard view == nil else {
      // A replica's local view marks its items: they are values already.
      try forEachItem(of: stream, header: header) { index, item in try ItemBytes.lending(item) { try body(index, $0) } }
      return
    }
    try passingOn { try CurrentView.forEachItemBytes(of: stream, in: reader, header: header, body) }
  }

  /// `replay(_:at:)`, item by item, each lent as bytes: `header` first
  /// (the contents with no items, and the count).
  package func forEachReplayedItemBytes(
    of stream: StreamName, at seq: UInt64? = nil, header: (StreamContents, Int) throws -> Void,
    _ body: (Int, ItemBytes) throws -> Void
  ) throws {
    guard view == nil else {
      var contents = try replay(stream, at: seq)
      let items = contents.items
      contents.items = []
      try header(contents, items.count)
      for (index, item) in items.enumerated() { try ItemBytes.lending(item) { try body(index, $0) } }
      return
    }
    try passingOn { try Replay.forEachItem(of: stream, at: seq, in: reader, header: header, body) }
  }
}
