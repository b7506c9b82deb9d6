/// A change as JSON: how a replica keeps it pending and how it pushes it
/// (docs/SYNC.md, "A change"). The members of the write as its user made it
/// in the local view (`op`, `stream`, `id`, `text`, `sender`, `index`,
/// `from`, `to`, `seq`; an undo's `sender` only when it has one, which a
/// remote older than undo's sender refuses), and sync's own: `change`,
/// `made`, `basis`, `after` (nearest first), `seen` (an append's index)
/// and `undoesChange`.
extension ReplicaChange {
  /// Writes the change as one JSON object.
  package func write(to json: inout JSONWriter) {
    json.beginObject()
    json.member("change", number)
    json.member("made", made)
    json.member("basis", basis)
    json.member("op", opName)
    json.member("stream", stream)
    func after(_ ids: [ItemID]) {
      json.key("after")
      json.array { json in for id in ids { json.value(id) } }
    }
    func textAndSender(_ text: String, _ sender: String?) {
      json.member("text", text)
      if let sender { json.member("sender", sender) }
    }
    switch intent {
    case .append(let id, let text, let sender, let seen):
      json.member("id", id)
      textAndSender(text, sender)
      json.member("seen", seen)
    case .insert(let id, let text, let sender, let ids, let seen):
      json.member("id", id)
      json.member("index", seen)
      textAndSender(text, sender)
      after(ids)
    case .move(let id, let ids, let from, let to):
      json.member("id", id)
      json.member("from", from)
      json.member("to", to)
      after(ids)
    case .remove(let id):
      json.member("id", id)
    case .edit(let id, let text, let sender):
      json.member("id", id)
      textAndSender(text, sender)
    case .restore(let id, let ids, let seen):
      json.member("id", id)
      if let ids {
        json.member("index", seen)
        after(ids)
      } else {
        json.member("seen", seen)
      }
    case .undo(let target, let sender):
      switch target {
      case .event(let seq): json.member("seq", seq)
      case .change(let earlier): json.member("undoesChange", earlier)
      }
      if let sender { json.member("sender", sender) }
    }
    json.endObject()
  }

  /// The change as JSON bytes.
  package var json: [UInt8] {
    var json = JSONWriter()
    write(to: &json)
    return json.take()
  }

  /// Reads a change from its JSON object; a member that is missing, of the
  /// wrong type or unknown is refused, naming it.
  package init(json value: JSONValue) throws(MsglogError) {
    var members = try JSONMembers(value, what: "a change")
    number = try members.number("change", atLeast: 1)
    made = try members.time("made")
    basis = try members.number("basis")
    let op = try members.string("op")
    stream = try StreamName(validating: try members.string("stream"))
    let id = try members.id("id", required: op != "undo")
    switch op {
    case "append":
      intent = .append(
        id: id!, text: try members.string("text"), sender: try members.optionalString("sender"),
        seen: try members.index("seen"))
    case "insert":
      intent = .insert(
        id: id!, text: try members.string("text"), sender: try members.optionalString("sender"),
        after: try members.ids("after"), seen: try members.index("index"))
    case "move":
      intent = .move(
        id: id!, after: try members.ids("after"), from: try members.index("from"), to: try members.index("to"))
    case "remove":
      intent = .remove(id: id!)
    case "edit":
      intent = .edit(id: id!, text: try members.string("text"), sender: try members.optionalString("sender"))
    case "restore":
      if members.has("after") {
        intent = .restore(id: id!, after: try members.ids("after"), seen: try members.index("index"))
      } else {
        intent = .restore(id: id!, after: nil, seen: try members.index("seen"))
      }
    case "undo":
      let target: UndoTarget =
        members.has("undoesChange")
        ? .change(try members.number("undoesChange", atLeast: 1)) : .event(seq: try members.number("seq", atLeast: 1))
      intent = .undo(target, sender: try members.optionalString("sender"))
    default:
      throw .invalidInput(.change("unknown op \(TerminalText.quoted(op)) in a change"))
    }
    try members.finish()
  }
}

/// The members of a JSON object, read one by one by name and type; the
/// ones never read are refused at the end (a typo must not be ignored).
struct JSONMembers {
  private var members: [String: JSONValue] = [:]
  private var read: Set<String> = []
  private let what: String

  init(_ value: JSONValue, what: String) throws(MsglogError) {
    guard case .object(let pairs) = value else { throw .invalidInput(.change("\(what) must be a JSON object")) }
    for (key, value) in pairs { members[key] = value }
    self.what = what
  }

  func has(_ key: String) -> Bool { members[key] != nil }

  private func refuse(_ key: String, _ expected: String) -> MsglogError {
    .invalidInput(.change(members[key] == nil ? "\"\(key)\" is missing" : "\"\(key)\" must be \(expected)"))
  }

  mutating func string(_ key: String) throws(MsglogError) -> String {
    read.insert(key)
    guard case .string(let text)? = members[key] else { throw refuse(key, "a string") }
    return text
  }

  mutating func optionalString(_ key: String) throws(MsglogError) -> String? {
    guard members[key] != nil else { return nil }
    return try string(key)
  }

  mutating func number(_ key: String, atLeast minimum: UInt64 = 0) throws(MsglogError) -> UInt64 {
    read.insert(key)
    guard case .number(let text)? = members[key], let value = Limits.parseNumber(text), value >= minimum else {
      throw refuse(key, "a whole number from \(minimum) to 2^63-1")
    }
    return value
  }

  mutating func index(_ key: String) throws(MsglogError) -> Int { Int(try number(key)) }

  mutating func time(_ key: String) throws(MsglogError) -> Timestamp {
    let text = try string(key)
    guard let time = Timestamp(rfc3339: text) else { throw refuse(key, "an RFC 3339 time") }
    return time
  }

  mutating func id(_ key: String, required: Bool) throws(MsglogError) -> ItemID? {
    guard required || members[key] != nil else { return nil }
    let text = try string(key)
    guard let id = ItemID(canonical: text) else { throw refuse(key, "a UUID") }
    return id
  }

  mutating func ids(_ key: String) throws(MsglogError) -> [ItemID] {
    read.insert(key)
    guard case .array(let values)? = members[key], values.count <= ReplicaChange.predecessorLimit else {
      throw refuse(key, "an array of at most \(ReplicaChange.predecessorLimit) UUIDs")
    }
    var ids: [ItemID] = []
    for value in values {
      guard case .string(let text) = value, let id = ItemID(canonical: text) else {
        throw refuse(key, "an array of UUIDs")
      }
      ids.append(id)
    }
    return ids
  }

  func finish() throws(MsglogError) {
    if let unknown = members.keys.sorted().first(where: { !read.contains($0) }) {
      throw .invalidInput(.change("unknown member \"\(unknown)\" in \(what)"))
    }
  }
}
