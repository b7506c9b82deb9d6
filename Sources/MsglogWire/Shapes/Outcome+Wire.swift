import Msglog

extension JSONWriter {
  /// What a write prints with `--json` (and the server answers).
  ///
  ///     append / insert / remove: {"seq":43,"stream":"main","version":18,"time":"…","id":"…","index":2}
  ///     edit / restore:           the same (edit: where the item is; restore: where it went)
  ///     move:                     {"seq":44,"stream":"main","version":19,"time":"…","id":"…","from":3,"to":7}
  ///
  /// An undo prints the shape of the event it appended, with `"undoes":S`;
  /// a rebased write adds `"rebased":true`. In a replica a write is a
  /// pending change: `"pending":N` in place of `seq` and `version`.
  package mutating func outcome(_ outcome: Outcome) {
    let event = outcome.event
    beginObject()
    if let pending = outcome.pending {
      member("pending", pending)
      member("stream", event.stream)
    } else {
      member("seq", event.seq)
      member("stream", event.stream)
      member("version", event.version)
    }
    member("time", event.time)
    member("id", event.id)
    switch event.op {
    case .insert, .remove, .edit, .restore: member("index", outcome.index)
    case .erase(_, let index): if let index { member("index", index) }
    case .unsign(_, let edit): member("edit", edit)
    case .move(_, let from, let to):
      member("from", from)
      member("to", to)
    }
    if let undoes = event.undoes, outcome.pending == nil { member("undoes", undoes) }
    if outcome.rebased { member("rebased", true) }
    endObject()
  }

  /// A write that changed nothing appended nothing: `{"moved":false}` (a
  /// move onto itself), `{"edited":false}` (the same text), `{"undone":false}`
  /// (an undoing already in effect). The server's answer, and what the
  /// command line prints with `--json` (in text mode, nothing on stdout).
  package mutating func unchanged(_ key: StaticString) {
    beginObject()
    member(key, false)
    endObject()
  }
}
