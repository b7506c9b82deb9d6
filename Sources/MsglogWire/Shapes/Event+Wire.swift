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
  ///
  /// Its members always come in this order, so each is laid out
  /// (`JSONWriter.laidOut`): its comma, key, quotes and colon are one
  /// append where `member` makes four, and `export` and `log --json` pay
  /// that for every member of every event.
  package mutating func event(_ event: Event) {
    beginObject()
    laidOut("\"seq\":", event.seq)
    laidOut(",\"stream\":", event.stream.text)
    laidOut(",\"version\":", event.version)
    laidOut(",\"time\":", event.time)
    opFields(of: event)
    if let undoes = event.undoes { laidOut(",\"undoes\":", undoes) }
    if let origin = event.origin { self.origin(origin) }
    endObject()
  }

  /// A replica's pending change, as the event it is in the local view
  /// (`log --json` after the events): `"pending":N` in place of `seq` and
  /// `version`; an undo of another pending change says `"undoesPending":M`.
  package mutating func pendingEvent(_ change: UInt64, _ event: Event, undoesChange: UInt64?) {
    beginObject()
    laidOut("\"pending\":", change)
    laidOut(",\"stream\":", event.stream.text)
    laidOut(",\"time\":", event.time)
    opFields(of: event)
    if let undoesChange {
      laidOut(",\"undoesPending\":", undoesChange)
    } else if let undoes = event.undoes {
      laidOut(",\"undoes\":", undoes)
    }
    endObject()
  }

  /// `op`, `id` and the op's own members, after the object's first members.
  private mutating func opFields(of event: Event) {
    switch event.op {
    case .insert(let id, let index, let text, let sender):
      laidOut(",\"op\":\"insert\",\"id\":", id)
      laidOut(",\"index\":", index)
      laidOut(",\"text\":", text)
      if let sender { laidOut(",\"sender\":", sender) }
    case .remove(let id, _):
      laidOut(",\"op\":\"remove\",\"id\":", id)
    case .move(let id, let from, let to):
      laidOut(",\"op\":\"move\",\"id\":", id)
      laidOut(",\"from\":", from)
      laidOut(",\"to\":", to)
    case .edit(let id, let text, let sender, _, _, _):
      laidOut(",\"op\":\"edit\",\"id\":", id)
      laidOut(",\"text\":", text)
      if let sender { laidOut(",\"sender\":", sender) }
    case .restore(let id, let index, _):
      laidOut(",\"op\":\"restore\",\"id\":", id)
      laidOut(",\"index\":", index)
    case .erase(let id, _):
      laidOut(",\"op\":\"erase\",\"id\":", id)
    case .unsign(let id, let edit):
      laidOut(",\"op\":\"unsign\",\"id\":", id)
      laidOut(",\"edit\":", edit)
    }
    // An erased insert or edit: its text blanked, no sender, and the seq of
    // the erase that blanked it; an unsigned edit: its text, no sender, and
    // the seq of the unsign.
    if let erased = event.erased { laidOut(",\"erased\":", erased) }
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
