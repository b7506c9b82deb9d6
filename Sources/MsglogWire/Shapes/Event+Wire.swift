import Msglog

extension JSONWriter {
  /// An event: the line `log --json` and `export` print, `import` reads
  /// back, and the `data:` of the server's event stream.
  ///
  ///     {"seq":43,"stream":"main","version":18,"time":"…","op":"insert","id":"…","index":2,"text":"…","sender":"ann"}
  ///     {"seq":44,"stream":"main","version":19,"time":"…","op":"edit","id":"…","text":"…","sender":"bob"}
  ///     {"seq":45,"stream":"main","version":20,"time":"…","op":"restore","id":"…","index":1,"undoes":12}
  ///     {"seq":46,"stream":"main","version":21,"time":"…","op":"insert",…,"origin":{"replica":"…","change":3,"made":"…"}}
  ///     {"seq":47,"stream":"main","version":22,"time":"…","op":"erase","id":"…"}
  ///     {"seq":12,"stream":"main","version":3,"time":"…","op":"insert","id":"…","index":0,"text":"","erased":47}
  ///     {"seq":48,"stream":"main","version":23,"time":"…","op":"unsign","id":"…","edit":30}
  ///     {"seq":30,"stream":"main","version":15,"time":"…","op":"edit","id":"…","text":"…","erased":48}
  ///
  /// The derived fields of a record (the index of a remove or an edit, the
  /// text records an edit or a restore names) are not part of it: import
  /// computes them again.
  package mutating func event(_ event: Event) {
    beginObject()
    member("seq", event.seq)
    member("stream", event.stream)
    member("version", event.version)
    member("time", event.time)
    opFields(of: event)
    if let undoes = event.undoes { member("undoes", undoes) }
    if let origin = event.origin { self.origin(origin) }
    endObject()
  }

  /// A replica's pending change, as the event it is in the local view
  /// (`log --json` after the events): `"pending":N` in place of `seq` and
  /// `version`; an undo of another pending change says `"undoesPending":M`.
  package mutating func pendingEvent(_ change: UInt64, _ event: Event, undoesChange: UInt64?) {
    beginObject()
    member("pending", change)
    member("stream", event.stream)
    member("time", event.time)
    opFields(of: event)
    if let undoesChange {
      member("undoesPending", undoesChange)
    } else if let undoes = event.undoes {
      member("undoes", undoes)
    }
    endObject()
  }

  /// `op`, `id` and the op's own members.
  private mutating func opFields(of event: Event) {
    member("op", event.opName)
    member("id", event.id)
    switch event.op {
    case .insert(_, let index, let text, let sender):
      member("index", index)
      member("text", text)
      if let sender { member("sender", sender) }
    case .remove:
      break
    case .move(_, let from, let to):
      member("from", from)
      member("to", to)
    case .edit(_, let text, let sender, _, _, _):
      member("text", text)
      if let sender { member("sender", sender) }
    case .restore(_, let index, _):
      member("index", index)
    case .erase:
      break
    case .unsign(_, let edit):
      member("edit", edit)
    }
    // An erased insert or edit: its text blanked, no sender, and the seq of
    // the erase that blanked it; an unsigned edit: its text, no sender, and
    // the seq of the unsign.
    if let erased = event.erased { member("erased", erased) }
  }

  /// Where a replica's change came from: `"origin":{"replica":"…","change":N,"made":"…"}`.
  package mutating func origin(_ origin: Origin) {
    key("origin")
    object { json in
      json.member("replica", origin.replica)
      json.member("change", origin.change)
      json.member("made", origin.made)
    }
  }
}

extension Event {
  /// The event as one JSON line (without its newline), the form `log
  /// --json` and `export` print and `import` reads back.
  package var jsonLine: String {
    var json = JSONWriter()
    json.event(self)
    return json.text
  }
}
