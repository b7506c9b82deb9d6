import Msglog

extension JSONWriter {
  /// `diff --json`: removals (index at A), insertions (index at B, the
  /// item's whole object), moves, and edited items (index at B, the new text).
  ///
  ///     {"stream":"main","from":40,"to":52,"removed":[{"index":3,"id":"…"}],
  ///      "inserted":[{"index":0,"id":"…","text":"…","time":"…","seq":45}],"moved":[{"from":5,"to":1,"id":"…"}],
  ///      "edited":[{"index":2,"id":"…","text":"…"}]}
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
    key("edited")
    beginArray()
    for reload in diff.edited {
      beginObject()
      member("index", reload.index)
      member("id", reload.item.id)
      member("text", reload.item.text)
      endObject()
    }
    endArray()
    endObject()
  }
}
