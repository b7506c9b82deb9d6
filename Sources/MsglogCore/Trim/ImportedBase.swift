/// A base line of a trimmed log's export, read back (docs/REFERENCE.md,
/// "Forgetting on purpose"):
///
///     {"op":"base","stream":"main","seq":999,"version":640,"items":[{"index":0,"id":"…","text":"hi","time":"…","seq":3},…]}
///
/// Its items are as `list --json` shows them, an edited one with
/// `"textSeq"` (the edit that holds its text) and an erased one with
/// `"erased"`.
package struct ImportedBase: Equatable, Sendable {
  package var stream: StreamName
  /// The seq before the horizon: every base line of an export names the same.
  package var seq: UInt64
  package var version: UInt64
  package var items: [Item]
  /// Per item: the seq of the edit that holds its text; nil when its insert does.
  package var textSeqs: [UInt64?]
  /// The stream's items removed before the horizon: their ids stay used
  /// (`"retired":[{"id","seq","removed"},…]`, absent when none).
  package var retired: [RetiredItem]

  package init(
    stream: StreamName, seq: UInt64, version: UInt64, items: [Item], textSeqs: [UInt64?], retired: [RetiredItem] = []
  ) {
    self.stream = stream
    self.seq = seq
    self.version = version
    self.items = items
    self.textSeqs = textSeqs
    self.retired = retired
  }

  /// Whether `line` (a UTF-8 BOM and leading blanks skipped) is a base
  /// line: it begins `{"op":"base"`, as `export` writes it.
  package static func isBaseLine(_ line: UnsafeRawBufferPointer) -> Bool {
    var start = 0
    if line.starts(with: [0xEF, 0xBB, 0xBF]) { start = 3 }
    while start < line.count, line[start] == UInt8(ascii: " ") || line[start] == UInt8(ascii: "\t") { start += 1 }
    return line[start...].starts(with: Array(#"{"op":"base""#.utf8))
  }

  /// Reads one base line; a malformed one throws `MsglogError.invalidInput`.
  package init(parsing line: [UInt8]) throws(MsglogError) {
    func bad(_ reason: String) -> MsglogError { .invalidInput(.write("a base line \(reason)")) }
    let value: JSONValue
    do { value = try JSONParser.parse(line) } catch { throw bad("is not JSON: \(error)") }
    guard case .object(let members) = value else { throw bad("must be an object") }
    func member(_ name: String) -> JSONValue? { members.first { $0.0 == name }?.1 }
    func number(_ value: JSONValue?, _ name: String) throws(MsglogError) -> UInt64 {
      guard case .number(let text)? = value, let n = Limits.parseNumber(text) else {
        throw bad("needs \"\(name)\", a number")
      }
      return n
    }
    for (name, _) in members where !["op", "stream", "seq", "version", "items", "retired"].contains(name) {
      throw bad("has an unknown member \"\(name)\"")
    }
    guard case .string(let name)? = member("stream") else { throw bad("needs \"stream\", a string") }
    stream = try StreamName(validating: name)
    seq = try number(member("seq"), "seq")
    version = try number(member("version"), "version")
    guard case .array(let listed)? = member("items") else { throw bad("needs \"items\", an array") }
    items = []
    textSeqs = []
    for (index, entry) in listed.enumerated() {
      guard case .object(let fields) = entry else { throw bad("has an item that is not an object") }
      func field(_ name: String) -> JSONValue? { fields.first { $0.0 == name }?.1 }
      func time(_ name: String) throws(MsglogError) -> Timestamp? {
        guard let value = field(name) else { return nil }
        guard case .string(let text) = value, let time = Timestamp(rfc3339: text) else {
          throw bad("has an item whose \"\(name)\" is not a time")
        }
        return time
      }
      guard try number(field("index"), "index") == UInt64(index) else { throw bad("has items out of order") }
      guard case .string(let idText)? = field("id"), let id = ItemID(canonical: idText) else {
        throw bad("has an item without a valid \"id\"")
      }
      guard case .string(let text)? = field("text") else { throw bad("has an item without \"text\"") }
      var sender: String? = nil
      if let value = field("sender") {
        guard case .string(let name) = value else { throw bad("has an item whose \"sender\" is not a string") }
        sender = name
      }
      guard let made = try time("time") else { throw bad("has an item without \"time\"") }
      var item = Item(
        id: id, text: text, sender: sender, time: made, seq: try number(field("seq"), "seq"), edited: try time("edited")
      )
      if let erased = field("erased") { item.erased = try number(erased, "erased") }
      let textSeq = try field("textSeq").map { value throws(MsglogError) in try number(value, "textSeq") }
      guard (textSeq == nil) == (item.edited == nil) else {
        throw bad("has an item with \"edited\" but no \"textSeq\", or the other way round")
      }
      for (name, _) in fields
      where !["index", "id", "text", "sender", "time", "seq", "edited", "erased", "textSeq"].contains(name) {
        throw bad("has an item with an unknown member \"\(name)\"")
      }
      items.append(item)
      textSeqs.append(textSeq)
    }
    retired = []
    if let listed = member("retired") {
      guard case .array(let entries) = listed else { throw bad("has \"retired\" that is not an array") }
      for entry in entries {
        guard case .object(let fields) = entry, fields.count == 3,
          case .string(let idText)? = fields.first(where: { $0.0 == "id" })?.1, let id = ItemID(canonical: idText)
        else { throw bad("has a retired item that is not {\"id\",\"seq\",\"removed\"}") }
        let inserted = try number(fields.first { $0.0 == "seq" }?.1, "seq")
        let removed = try number(fields.first { $0.0 == "removed" }?.1, "removed")
        retired.append(RetiredItem(stream: stream, id: id, insertSeq: inserted, removeSeq: removed))
      }
    }
  }
}
