extension Event {
  /// The event as one JSON line, the form `log --json` and `export` print
  /// and `import` reads back.
  public var jsonLine: String {
    var o = JSONObjectWriter()
    o.add("seq", seq)
    o.add("stream", stream)
    o.add("version", version)
    o.add("time", time.rfc3339)
    o.add("op", opName)
    o.add("id", id.text)
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
    return o.close()
  }
}
