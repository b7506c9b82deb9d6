import Msglog

extension JSONWriter {
  /// `diff --json`: removals (index at A), insertions (index at B, the
  /// item's whole object) and moves.
  ///
  ///     {"stream":"main","from":40,"to":52,"removed":[{"index":3,"id":"…"}],
  ///      "inserted":[{"index":0,"id":"…","text":"…","time":"…","seq":45}],"moved":[{"from":5,"to":1,"id":"…"}]}
  package mutating func diff(_ diff: StreamDiff) {
    beginObject()
    member("stream", diff.stream)
    member("from", diff.from)
    member("to", diff.to)
    key("removed")
    beginArray()
    for removal in diff.removed {
      beginObject()
      member("index", removal.index)
      member("id", removal.item.id)
      endObject()
    }
    endArray()
    key("inserted")
    beginArray()
    for insertion in diff.inserted { item(insertion.item, index: insertion.index) }
    endArray()
    key("moved")
    beginArray()
    for move in diff.moved {
      beginObject()
      member("from", move.from)
      member("to", move.to)
      member("id", move.id)
      endObject()
    }
    endArray()
    endObject()
  }
}
