import Msglog

extension JSONWriter {
  /// `streams --json`; with `"sync"` in a log that replicas push to:
  /// their count, the outcomes it keeps for them and the bytes of both.
  ///
  ///     {"streams":[{"stream":"main","count":2,"version":17,"seq":42}, …]}
  ///     {"streams":[…],"sync":{"replicas":3,"outcomes":812,"bytes":204800}}
  package mutating func streams(_ streams: [StreamCounters], sync: SyncBookkeeping? = nil) {
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
    if let sync, sync.replicas > 0 {
      key("sync")
      beginObject()
      member("replicas", sync.replicas)
      member("outcomes", sync.outcomes)
      member("bytes", sync.bytes)
      endObject()
    }
    endObject()
  }
}
