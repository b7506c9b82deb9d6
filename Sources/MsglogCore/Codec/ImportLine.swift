#if canImport(Glibc)
  import Glibc
#endif

/// Reads one line of `import` input into the request it stands for.
///
///     {"op":"append","text":"hi","sender":"ann","stream":"main","id":"…"}
///     {"op":"insert","index":2,"text":"…"}
///     {"op":"remove","id":"…"}
///     {"op":"move","from":3,"to":7}
///     {"op":"edit","id":"…","text":"…","sender":"bob"}
///     {"op":"restore","id":"…","index":2}       (index: after its predecessor when absent)
///     …,"undoes":12}                             (on any of them: the event it undoes)
///
/// Lines written by `export` are accepted as they are: `seq` and `version` are
/// checked for form and otherwise ignored (the database assigns its own),
/// `time` is kept, and a move's `id` must be the item at `from`.
/// Unknown keys are refused, so that a typo (`"sendr"`) is not silently lost.
///
/// Two readers fill the same fields: a byte-level scanner for the lines
/// `export` writes and most people type (flat objects of plain strings and
/// integers: no value objects, no allocation but the strings kept), and the
/// strict general JSON parser for everything else. The scanner gives up on
/// anything unusual — an escape, a duplicate or unknown key, a float — and
/// the general parser then accepts or refuses the line, so both paths give
/// the same request or the same error for every line.
package enum ImportLine {
  /// The keys an import line may have, in alphabetical order (the order in
  /// which unused ones are reported).
  enum Key: Int, CaseIterable {
    case from, id, index, op, seq, sender, stream, text, time, to, undoes, version

    var name: String {
      switch self {
      case .from: "from"
      case .id: "id"
      case .index: "index"
      case .op: "op"
      case .seq: "seq"
      case .sender: "sender"
      case .stream: "stream"
      case .text: "text"
      case .time: "time"
      case .to: "to"
      case .undoes: "undoes"
      case .version: "version"
      }
    }

    init?(_ name: UnsafeRawBufferPointer) {
      func equals(_ text: StaticString) -> Bool {
        name.count == text.utf8CodeUnitCount && memcmp(name.baseAddress!, text.utf8Start, name.count) == 0
      }
      switch name.count {
      case 2:
        if equals("op") {
          self = .op
        } else if equals("id") {
          self = .id
        } else if equals("to") {
          self = .to
        } else {
          return nil
        }
      case 3: if equals("seq") { self = .seq } else { return nil }
      case 4:
        if equals("text") {
          self = .text
        } else if equals("time") {
          self = .time
        } else if equals("from") {
          self = .from
        } else {
          return nil
        }
      case 5: if equals("index") { self = .index } else { return nil }
      case 6:
        if equals("stream") {
          self = .stream
        } else if equals("sender") {
          self = .sender
        } else if equals("undoes") {
          self = .undoes
        } else {
          return nil
        }
      case 7: if equals("version") { self = .version } else { return nil }
      default: return nil
      }
    }

    init?(_ name: String) {
      var name = name
      guard let key = name.withUTF8({ Key(UnsafeRawBufferPointer($0)) }) else { return nil }
      self = key
    }
  }

  /// A member's value, as far as an import line cares.
  enum Value {
    case string(String)
    /// An integer in 0…2^63-1; nil for any other number.
    case number(UInt64?)
    /// A string that is a canonical UUID (read without making a String).
    case uuid(ItemID)
    /// A string that is an RFC 3339 timestamp.
    case timestamp(Timestamp)
    /// Anything else, by its kind ("a boolean", "an object"…).
    case other(kind: String)
  }

  /// Reads many lines, remembering the last stream name so that a run of
  /// lines for one stream checks and copies its name once.
  package struct Reader {
    let defaultStream: StreamName
    private var lastStream: (bytes: [UInt8], name: StreamName)? = nil
    /// The scanner's buffer for escaped strings, kept from line to line.
    private var scratch: [UInt8] = []

    package init(defaultStream: StreamName) { self.defaultStream = defaultStream }

    package mutating func parse(_ line: UnsafeRawBufferPointer) throws(MsglogError) -> WriteRequest {
      var fields: Fields
      if let scanned = Scanner.fields(line, lastStream: lastStream, scratch: &scratch) {
        fields = scanned
      } else {
        fields = try ImportLine.generalFields(line)
      }
      let request = try ImportLine.request(&fields, defaultStream: defaultStream)
      if case .string(let name)? = fields.values[Key.stream.rawValue], lastStream?.name.text != name {
        lastStream = (Array(name.utf8), request.stream)
      }
      return request
    }
  }

  package static func parse(_ bytes: [UInt8], defaultStream: StreamName) throws(MsglogError) -> WriteRequest {
    var reader = Reader(defaultStream: defaultStream)
    let result = bytes.withUnsafeBytes { raw in Result { () throws(MsglogError) in try reader.parse(raw) } }
    return try result.get()
  }

  /// Whether the fast scanner, where it takes a line, reads it as the
  /// general parser does (the same request or the same refusal): the
  /// import-line fuzzer's differential check.
  package static func scannerAgreesWithGeneralParser(_ line: UnsafeRawBufferPointer) -> Bool {
    func outcome(_ fields: Result<Fields, MsglogError>) -> String {
      switch fields {
      case .failure(let error): return "error: \(error)"
      case .success(var fields):
        do { return "\(try request(&fields, defaultStream: "main"))" } catch { return "error: \(error)" }
      }
    }
    guard let scanned = Scanner.fields(line, lastStream: nil) else { return true }
    let general = Result { () throws(MsglogError) in try generalFields(line) }
    return outcome(.success(scanned)) == outcome(general)
  }

  /// The members of a line by the general parser: any valid JSON, refused
  /// with the parser's message when invalid.
  static func generalFields(_ line: UnsafeRawBufferPointer) throws(MsglogError) -> Fields {
    let value: JSONValue
    do {
      value = try JSONParser.parse(Array(line))
    } catch {
      throw .invalidInput(line: "\(error)")
    }
    guard case .object(let members) = value else {
      throw .invalidInput(line: "expected a JSON object, found \(value.kindName)")
    }
    var fields = Fields()
    for (name, member) in members {
      guard let key = Key(name) else { throw .invalidInput(line: "unknown key \"\(name)\"") }
      switch member {
      case .string(let s): fields.values[key.rawValue] = .string(s)
      case .number(let text): fields.values[key.rawValue] = .number(Limits.parseNumber(text))
      default: fields.values[key.rawValue] = .other(kind: member.kindName)
      }
    }
    return fields
  }

  /// The request the fields stand for, or why they stand for none.
  static func request(_ line: inout Fields, defaultStream: StreamName) throws(MsglogError) -> WriteRequest {
    guard let op = try line.string(.op) else { throw .invalidInput(line: "missing key \"op\"") }
    _ = try line.number(.seq)
    _ = try line.number(.version)
    let stream = try line.stream() ?? defaultStream
    let time = try line.time()

    let command: WriteRequest.Command
    switch op {
    case "append", "insert":
      let index: Int?
      if op == "insert" {
        guard let i = try line.number(.index) else { throw .invalidInput(line: "an insert needs \"index\"") }
        index = Int(i)  // at most 2^63-1: `Fields.number` says so
      } else {
        index = nil
      }
      guard let text = try line.string(.text) else { throw .invalidInput(line: "\(article(op)) \(op) needs \"text\"") }
      try Limits.checkText(text)
      let sender = try line.string(.sender)
      if let sender { try Limits.checkSender(sender) }
      let id = try line.id()
      command = .insert(InsertRequest(index: index, text: text, sender: sender, id: id))
    case "remove":
      command = .remove(try line.selector(op))
    case "edit":
      let selector = try line.selector(op)
      guard let text = try line.string(.text) else { throw .invalidInput(line: "an edit needs \"text\"") }
      try Limits.checkText(text)
      let sender = try line.string(.sender)
      if let sender { try Limits.checkSender(sender) }
      command = .edit(selector, text: text, sender: sender)
    case "restore":
      let selector = try line.selector(op)
      command = .restore(selector, index: try line.number(.index).map { Int($0) })
    case "move":
      guard let from = try line.number(.from), let to = try line.number(.to) else {
        throw .invalidInput(line: "a move needs \"from\" and \"to\"")
      }
      command = .move(from: Int(from), to: Int(to), id: try line.id())
    default:
      throw .invalidInput(
        line: "unknown op \(TerminalText.quoted(op)): expected append, insert, remove, move, edit or restore")
    }
    let undoes = try line.number(.undoes)
    if let undoes {
      guard undoes > 0 else { throw .invalidInput(line: "\"undoes\" must name a seq, from 1") }
      if case .insert = command {
        throw .invalidInput(line: "\(article(op)) \(op) undoes nothing: it takes no \"undoes\"")
      }
    }
    for key in Key.allCases where line.values[key.rawValue] != nil && !line.used[key.rawValue] {
      throw .invalidInput(line: "key \"\(key.name)\" does not belong to \(article(op)) \(op) line")
    }
    return WriteRequest(stream: stream, command: command, time: time, undoes: undoes)
  }

  /// "an append", "a move".
  static func article(_ op: String) -> String {
    op.first.map { "aeiou".contains($0) } == true ? "an" : "a"
  }

  /// An object's members by key, remembering which were read.
  ///
  /// On the stack: two arrays per line were two allocations per line.
  struct Fields {
    var values = InlineArray<16, Value?>(repeating: nil)
    var used = KeySet()
    /// The stream, when the scanner found it to be the previous line's.
    var knownStream: StreamName? = nil

    mutating func string(_ key: Key) throws(MsglogError) -> String? {
      guard let value = values[key.rawValue] else { return nil }
      used[key.rawValue] = true
      switch value {
      case .string(let s): return s
      case .uuid(let id): return id.text
      case .timestamp(let time): return time.rfc3339
      case .number: throw .invalidInput(line: "\"\(key.name)\" must be a string, not a number")
      case .other(let kind): throw .invalidInput(line: "\"\(key.name)\" must be a string, not \(kind)")
      }
    }

    mutating func number(_ key: Key) throws(MsglogError) -> UInt64? {
      guard let value = values[key.rawValue] else { return nil }
      used[key.rawValue] = true
      guard case .number(let n?) = value else {
        throw .invalidInput(line: "\"\(key.name)\" must be an integer from 0 to 2^63-1")
      }
      return n
    }

    mutating func stream() throws(MsglogError) -> StreamName? {
      if let knownStream {
        used[Key.stream.rawValue] = true
        return knownStream
      }
      return try string(.stream).map { name throws(MsglogError) in try StreamName(validating: name) }
    }

    mutating func time() throws(MsglogError) -> Timestamp? {
      if case .timestamp(let time)? = values[Key.time.rawValue] {
        used[Key.time.rawValue] = true
        return time
      }
      guard let text = try string(.time) else { return nil }
      guard let parsed = Timestamp(rfc3339: text) else {
        throw .invalidInput(line: "\"time\" is not an RFC 3339 timestamp: \(TerminalText.quoted(text))")
      }
      return parsed
    }

    /// The item a remove, an edit or a restore names: a UUID or a prefix.
    mutating func selector(_ op: String) throws(MsglogError) -> ItemSelector {
      if case .uuid(let id)? = values[Key.id.rawValue] {
        used[Key.id.rawValue] = true
        return .id(id)
      }
      guard let text = try string(.id) else { throw .invalidInput(line: "\(article(op)) \(op) needs \"id\"") }
      return try ItemSelector(parsing: text)
    }

    mutating func id() throws(MsglogError) -> ItemID? {
      if case .uuid(let id)? = values[Key.id.rawValue] {
        used[Key.id.rawValue] = true
        return id
      }
      guard let text = try string(.id) else { return nil }
      guard let id = ItemID(canonical: text) else {
        throw .invalidInput(line: "\"id\" is not a UUID: \(TerminalText.quoted(text))")
      }
      return id
    }
  }

  /// Which keys of a line were read: one bit per key.
  struct KeySet {
    private var bits: UInt16 = 0

    init() { precondition(Key.allCases.count <= 16, "a key set holds 16 keys") }

    subscript(_ key: Int) -> Bool {
      get { bits & (1 << key) != 0 }
      set { if newValue { bits |= 1 << key } else { bits &= ~(1 << key) } }
    }
  }

  /// The byte-level reader of plain lines (see `ImportLine`): nil for any
  /// line it does not fully understand.
  ///
  /// It walks the line through a pointer, with no bounds check per byte
  /// (the end is checked instead), and reads a string's simple escapes
  /// (`\"`, `\\`, `\/`, `\b`, `\f`, `\n`, `\r`, `\t`) itself, as the
  /// general parser does; a `\u` escape is left to the general parser.
  enum Scanner {
    static func fields(_ line: UnsafeRawBufferPointer, lastStream: (bytes: [UInt8], name: StreamName)?) -> Fields? {
      var scratch: [UInt8] = []
      return fields(line, lastStream: lastStream, scratch: &scratch)
    }

    /// `scratch` holds an escaped string's bytes while they are read (kept
    /// by the caller from line to line).
    static func fields(
      _ line: UnsafeRawBufferPointer, lastStream: (bytes: [UInt8], name: StreamName)?, scratch: inout [UInt8]
    ) -> Fields? {
      guard let base = line.baseAddress else { return nil }
      var cursor = Cursor(start: base.assumingMemoryBound(to: UInt8.self), count: line.count)
      cursor.skipSpace()
      guard cursor.take(UInt8(ascii: "{")) else { return nil }
      var fields = Fields()
      cursor.skipSpace()
      if cursor.take(UInt8(ascii: "}")) {
        cursor.skipSpace()
        return cursor.atEnd ? fields : nil
      }
      while true {
        cursor.skipSpace()
        guard cursor.peek == UInt8(ascii: "\""), let name = cursor.plainString(), let key = Key(name),
          fields.values[key.rawValue] == nil
        else { return nil }
        cursor.skipSpace()
        guard cursor.take(UInt8(ascii: ":")) else { return nil }
        cursor.skipSpace()
        guard let first = cursor.peek else { return nil }
        if first == UInt8(ascii: "\"") {
          let start = cursor.p
          if let bytes = cursor.plainString() {
            if key == .id, let id = ItemID(canonicalUTF8: bytes) {
              fields.values[key.rawValue] = .uuid(id)
            } else if key == .time, let time = Timestamp(rfc3339UTF8: bytes) {
              fields.values[key.rawValue] = .timestamp(time)
            } else if key == .stream, let last = lastStream, last.bytes.elementsEqual(bytes) {
              fields.values[key.rawValue] = .string(last.name.text)
              fields.knownStream = last.name
            } else {
              guard let text = makeString(bytes) else { return nil }
              fields.values[key.rawValue] = .string(text)
            }
          } else {
            // Escapes (or a control character, or no closing quote).
            cursor.p = start
            guard cursor.escapedString(into: &scratch),
              let text = scratch.withUnsafeBytes({ makeString($0) })
            else { return nil }
            fields.values[key.rawValue] = .string(text)
          }
        } else if Cursor.isDigit(first) {
          let start = cursor.p
          while let b = cursor.peek, Cursor.isDigit(b) { cursor.p += 1 }
          let digits = cursor.p - start
          // A leading zero, a fraction or an exponent: the general parser decides.
          if digits > 1 && first == 0x30 { return nil }
          if let b = cursor.peek, b == UInt8(ascii: ".") || b == UInt8(ascii: "e") || b == UInt8(ascii: "E") {
            return nil
          }
          var value: UInt64? = nil
          if digits <= 19 {
            var v: UInt64 = 0
            for j in 0..<digits { v = v &* 10 &+ UInt64(start[j] &- 0x30) }
            value = v <= Limits.maxNumber ? v : nil
          }
          fields.values[key.rawValue] = .number(value)
        } else {
          return nil
        }
        cursor.skipSpace()
        if cursor.take(UInt8(ascii: ",")) { continue }
        guard cursor.take(UInt8(ascii: "}")) else { return nil }
        cursor.skipSpace()
        return cursor.atEnd ? fields : nil
      }
    }

    /// Valid UTF-8 as a String; nil otherwise. Text of ASCII bytes (the
    /// usual key and value) is copied without the general validation.
    @inline(__always)
    static func makeString(_ bytes: UnsafeRawBufferPointer) -> String? {
      var ascii = true
      for b in bytes where b >= 0x80 {
        ascii = false
        break
      }
      if ascii { return String(decoding: bytes, as: UTF8.self) }
      return String(validating: bytes, as: UTF8.self)
    }

    /// A position in a line, with its end.
    struct Cursor {
      var p: UnsafePointer<UInt8>
      let end: UnsafePointer<UInt8>

      init(start: UnsafePointer<UInt8>, count: Int) {
        p = start
        end = start + count
      }

      var atEnd: Bool { p == end }

      /// The byte at the cursor; nil at the end.
      var peek: UInt8? { p < end ? p.pointee : nil }

      @inline(__always)
      static func isDigit(_ b: UInt8) -> Bool { b &- 0x30 < 10 }

      /// Steps over `byte` if it is next.
      @inline(__always)
      mutating func take(_ byte: UInt8) -> Bool {
        guard p < end, p.pointee == byte else { return false }
        p += 1
        return true
      }

      @inline(__always)
      mutating func skipSpace() {
        while p < end {
          let b = p.pointee
          guard b == 0x20 || b == 0x09 || b == 0x0D || b == 0x0A else { return }
          p += 1
        }
      }

      /// The bytes of a string starting at its quote, when it holds no
      /// escape or control character; the cursor is then past its closing
      /// quote. Nil otherwise (the cursor is somewhere inside).
      @inline(__always)
      mutating func plainString() -> UnsafeRawBufferPointer? {
        p += 1
        let start = p
        while p < end {
          let b = p.pointee
          if b == UInt8(ascii: "\"") {
            p += 1
            return UnsafeRawBufferPointer(start: start, count: p - 1 - start)
          }
          if b == UInt8(ascii: "\\") || b < 0x20 { return nil }
          p += 1
        }
        return nil
      }

      /// A string starting at its quote with simple escapes, unescaped into
      /// `out`; false for a `\u` escape, a control character, an invalid
      /// escape or a missing closing quote (the general parser decides).
      mutating func escapedString(into out: inout [UInt8]) -> Bool {
        out.removeAll(keepingCapacity: true)
        p += 1
        var run = p
        while p < end {
          let b = p.pointee
          if b == UInt8(ascii: "\"") {
            out.append(contentsOf: UnsafeBufferPointer(start: run, count: p - run))
            p += 1
            return true
          }
          if b < 0x20 { return false }
          if b == UInt8(ascii: "\\") {
            out.append(contentsOf: UnsafeBufferPointer(start: run, count: p - run))
            p += 1
            guard p < end else { return false }
            guard let byte = JSONParser.unescaped(p.pointee) else { return false }
            out.append(byte)
            p += 1
            run = p
            continue
          }
          p += 1
        }
        return false
      }
    }
  }
}

extension MsglogError {
  /// A malformed import line.
  static func invalidInput(line reason: String) -> MsglogError { .invalidInput(.importLine(reason)) }
}

extension ImportLine {
  /// Where the line starting at `start` ends: its newline, or the end of `body`.
  package static func endOfLine(_ body: UnsafeRawBufferPointer, from start: Int) -> Int {
    guard start < body.count, let found = memchr(body.baseAddress! + start, 0x0A, body.count - start) else {
      return body.count
    }
    return UnsafeRawPointer(found) - body.baseAddress!
  }

  /// How many lines `body` holds (the last may lack its newline).
  package static func lineCount(_ body: UnsafeRawBufferPointer) -> Int {
    var count = 0
    var start = 0
    while start < body.count {
      count += 1
      start = endOfLine(body, from: start) + 1
    }
    return count
  }

  /// A line of spaces, tabs and carriage returns only, which an import skips.
  package static func isBlank(_ line: UnsafeRawBufferPointer) -> Bool {
    line.allSatisfy { $0 == 0x20 || $0 == 0x09 || $0 == 0x0D }
  }
}
