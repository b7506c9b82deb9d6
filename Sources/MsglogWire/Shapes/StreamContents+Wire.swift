import Msglog

extension JSONWriter {
  /// `list --json` and `replay --json`, whole.
  ///
  ///     {"stream":"main","seq":42,"version":17,"count":2,"items":[{…},{…}]}
  package mutating func snapshot(_ snapshot: StreamContents) {
    snapshotHead(snapshot, count: snapshot.items.count)
    for (index, item) in snapshot.items.enumerated() { self.item(item, index: index) }
    snapshotTail()
  }

  /// The document up to the opening bracket of `items`, so that a long list
  /// can follow item by item (`item(_:index:)`) and end with `snapshotTail()`.
  package mutating func snapshotHead(_ snapshot: StreamContents, count: Int) {
    beginObject()
    member("stream", snapshot.stream)
    member("seq", snapshot.seq)
    member("version", snapshot.version)
    member("count", count)
    key("items")
    beginArray()
  }

  /// Closes what `snapshotHead` opened.
  package mutating func snapshotTail() {
    endArray()
    endObject()
  }
}
