import Msglog

extension JSONWriter {
  /// A trimmed log's base, the line `export` begins with for each stream:
  ///
  ///     {"op":"base","stream":"main","seq":999,"version":640,"items":[{"index":0,…},…]}
  ///
  /// Its items are as `list --json` shows them, an edited one with
  /// `"textSeq"`: the seq of the edit that holds its text (what a later
  /// edit names as the text it replaces). Then, when there are any, the
  /// stream's items removed before the horizon, whose ids stay used:
  /// `"retired":[{"id":…,"seq":INSERT,"removed":REMOVE},…]`.
  package mutating func base(_ base: ImportedBase) {
    beginObject()
    member("op", "base")
    member("stream", base.stream)
    member("seq", base.seq)
    member("version", base.version)
    key("items")
    beginArray()
    for (index, item) in base.items.enumerated() { self.item(item, index: index, textSeq: base.textSeqs[index]) }
    endArray()
    if !base.retired.isEmpty {
      key("retired")
      beginArray()
      for item in base.retired {
        beginObject()
        member("id", item.id.text)
        member("seq", item.insertSeq)
        member("removed", item.removeSeq)
        endObject()
      }
      endArray()
    }
    endObject()
  }
}
