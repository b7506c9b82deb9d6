extension Event {
  /// The event as one JSON line, the form `log --json` and `export` print
  /// and `import` reads back.
  package var jsonLine: String {
    var o = JSONObjectWriter()
    addMembers(to: &o)
    return o.close()
  }

  /// The event's members in docs/REFERENCE.md's order, into an object being written.
  package func addMembers(to o: inout JSONObjectWriter) {
    o.add("seq", seq)
    o.add("stream", stream)
    o.add("version", version)
    o.add("time", time)
    o.add("op", opName)
    o.add("id", id)
    switch op {
    case .insert(_, let index, let text, let sender):
      o.add("index", index)
      o.add("text", text)
      if let sender { o.add("sender", sender) }
    case .remove:
      break
    case .move(_, let from, let to):
      o.add("from", from)
      o.add("to", to)
    }
  }
}
