import Msglog

extension JSONWriter {
  /// A named token as `token list --json` shows it, never its secret:
  ///
  ///     {"name":"ann","id":"3f2a…","read":["*"],"write":["team/*"],"erase":[],
  ///      "made":"2026-12-02T05:00:00.000Z","expires":null,"lastUsed":null,"revoked":null}
  package mutating func namedToken(_ token: NamedToken) {
    beginObject()
    member("name", token.name)
    member("id", token.id)
    for (key, patterns) in [("read", token.scopes.read), ("write", token.scopes.write), ("erase", token.scopes.erase)] {
      switch key {
      case "read": self.key("read")
      case "write": self.key("write")
      default: self.key("erase")
      }
      array { json in for pattern in patterns { json.value(pattern.description) } }
    }
    optionalTime("made", token.made)
    optionalTime("expires", token.expires)
    optionalTime("lastUsed", token.lastUsed)
    optionalTime("revoked", token.revoked)
    endObject()
  }

  private mutating func optionalTime(_ name: StaticString, _ time: Timestamp?) {
    key(name)
    if let time { value(time) } else { null() }
  }
}
