import Msglog

extension JSONWriter {
  /// `streams --json`.
  ///
  ///     {"streams":[{"stream":"main","count":2,"version":17,"seq":42}, …]}
  package mutating func streams(_ streams: [StreamCounters]) {
    beginObject()
    key("streams")
    beginArray()
    for summary in streams {
      beginObject()
      member("stream", summary.stream)
      member("count", summary.count)
      member("version", summary.version)
      member("seq", summary.lastSeq)
      endObject()
    }
    endArray()
    endObject()
  }
}
