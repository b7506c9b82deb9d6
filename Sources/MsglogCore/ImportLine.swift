/// Reads one line of `import` input into the request it stands for.
///
///     {"op":"append","text":"hi","sender":"ann","stream":"main","id":"…"}
///     {"op":"insert","index":2,"text":"…"}
///     {"op":"remove","id":"…"}
///     {"op":"move","from":3,"to":7}
///
/// Lines written by `export` are accepted as they are: `seq` and `version` are
/// checked for form and otherwise ignored (the database assigns its own),
/// `time` is kept, and a move's `id` must be the item at `from`.
/// Unknown keys are refused, so that a typo (`"sendr"`) is not silently lost.
public enum ImportLine {
  static let knownKeys: Set<String> = [
    "op", "stream", "id", "index", "text", "sender", "time", "from", "to", "seq", "version",
  ]

  public static func parse(_ bytes: [UInt8], defaultStream: StreamName) throws(MsglogError) -> WriteRequest {
    let value: JSONValue
    do {
      value = try JSONParser.parse(bytes)
    } catch {
      throw .invalidInput(line: "\(error)")
    }
    guard case .object(let members) = value else {
      throw .invalidInput(line: "expected a JSON object, found \(value.kindName)")
    }
    var fields: [String: JSONValue] = [:]
    for (key, member) in members {
      guard knownKeys.contains(key) else { throw .invalidInput(line: "unknown key \"\(key)\"") }
      fields[key] = member
    }
    var line = Fields(fields: fields)

    guard let op = try line.string("op") else { throw .invalidInput(line: "missing key \"op\"") }
    _ = try line.number("seq")
    _ = try line.number("version")
    let stream =
      try line.string("stream").map { name throws(MsglogError) in try StreamName(validating: name) } ?? defaultStream
    var time: Timestamp? = nil
    if let text = try line.string("time") {
      guard let parsed = Timestamp(rfc3339: text) else {
        throw .invalidInput(line: "\"time\" is not an RFC 3339 timestamp: \(TerminalText.quoted(text))")
      }
      time = parsed
    }

    let command: Command
    switch op {
    case "append", "insert":
      let index: UInt64?
      if op == "insert" {
        guard let i = try line.number("index") else { throw .invalidInput(line: "an insert needs \"index\"") }
        index = i
      } else {
        index = nil
      }
      guard let text = try line.string("text") else { throw .invalidInput(line: "\(article(op)) \(op) needs \"text\"") }
      try Limits.checkText(text)
      let sender = try line.string("sender")
      if let sender { try Limits.checkSender(sender) }
      let id = try line.id()
      command = .insert(InsertRequest(index: index, text: text, sender: sender, id: id))
    case "remove":
      guard let idText = try line.string("id") else { throw .invalidInput(line: "a remove needs \"id\"") }
      command = .remove(try ItemSelector(parsing: idText))
    case "move":
      guard let from = try line.number("from"), let to = try line.number("to") else {
        throw .invalidInput(line: "a move needs \"from\" and \"to\"")
      }
      command = .move(from: from, to: to, id: try line.id())
    default:
      throw .invalidInput(line: "unknown op \(TerminalText.quoted(op)): expected append, insert, remove or move")
    }
    let unused = line.fields.keys.filter { !line.used.contains($0) }.sorted()
    if let key = unused.first {
      throw .invalidInput(line: "key \"\(key)\" does not belong to \(article(op)) \(op) line")
    }
    return WriteRequest(stream: stream, command: command, time: time)
  }

  /// "an append", "a move".
  static func article(_ op: String) -> String {
    op.first.map { "aeiou".contains($0) } == true ? "an" : "a"
  }

  /// Typed access to an object's members, remembering which were read.
  struct Fields {
    let fields: [String: JSONValue]
    var used: Set<String> = []

    init(fields: [String: JSONValue]) { self.fields = fields }

    mutating func string(_ key: String) throws(MsglogError) -> String? {
      guard let value = fields[key] else { return nil }
      used.insert(key)
      guard case .string(let s) = value else {
        throw .invalidInput(line: "\"\(key)\" must be a string, not \(value.kindName)")
      }
      return s
    }

    mutating func number(_ key: String) throws(MsglogError) -> UInt64? {
      guard let value = fields[key] else { return nil }
      used.insert(key)
      guard case .number(let text) = value, let n = Limits.parseNumber(text) else {
        throw .invalidInput(line: "\"\(key)\" must be an integer from 0 to 2^63-1")
      }
      return n
    }

    mutating func id() throws(MsglogError) -> ItemID? {
      guard let text = try string("id") else { return nil }
      guard let id = ItemID(canonical: text) else {
        throw .invalidInput(line: "\"id\" is not a UUID: \(TerminalText.quoted(text))")
      }
      return id
    }
  }
}

extension MsglogError {
  /// A malformed import line.
  static func invalidInput(line reason: String) -> MsglogError { .invalidInput(.importLine(reason)) }
}
