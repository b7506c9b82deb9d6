#if canImport(Glibc)
  import Glibc
#endif

/// Reads one line of `import` input into the request it stands for: its
/// members (`WriteMembers`), decoded as every door's writes are
/// (`Write(decoding:operation:door:defaultStream:)`, `WriteDoor.importLine`).
///
///     {"op":"append","text":"hi","sender":"ann","stream":"main","id":"…"}
///     {"op":"insert","index":2,"text":"…"}
///     {"op":"remove","id":"…"}
///     {"op":"move","from":3,"to":7}
///     {"op":"edit","id":"…","text":"…","sender":"bob"}
///     {"op":"restore","id":"…","index":2}       (index: after its predecessor when absent)
///     …,"undoes":12}                             (on any but an append or insert: the event it undoes)
///
/// Lines written by `export` are accepted as they are: `seq` and `version` are
/// checked for form and otherwise ignored (the database assigns its own),
/// `time` is kept, and a move's `id` must be the item at `from`.
/// Unknown members are refused, so that a typo (`"sendr"`) is not silently lost.
///
/// Two readers fill the same members: a byte-level scanner for the lines
/// `export` writes and most people type (flat objects of plain strings and
/// integers: no value objects, no allocation but the strings kept), and the
/// strict general JSON parser for everything else. The scanner gives up on
/// anything unusual — a `\u` escape, a duplicate or unknown key, a float — and
/// the general parser then accepts or refuses the line, so both paths give
/// the same request or the same error for every line.
package enum ImportLine {
  /// Reads many lines, remembering the last stream name so that a run of
  /// lines for one stream checks and copies its name once.
  package struct Reader {
    let defaultStream: StreamName
    private var lastStream: (bytes: [UInt8], name: StreamName)? = nil
    /// The scanner's buffer for escaped strings, kept from line to line.
    private var scratch: [UInt8] = []

    package init(defaultStream: StreamName) { self.defaultStream = defaultStream }

    package mutating func parse(_ line: UnsafeRawBufferPointer) throws(MsglogError) -> WriteRequest {
      var members = WriteMembers()
      var origin: Origin? = nil
      do throws(MsglogError) {
        if !Scanner.scan(line, lastStream: lastStream, scratch: &scratch, into: &members) {
          (members, origin) = try ImportLine.generalMembersAndOrigin(line)
        }
      } catch {
        // Base lines are read before the lines they begin (`ImportedBase`):
        // one here came after an event, which no export writes.
        if !line.isEmpty, ImportedBase.isBaseLine(line) {
          throw .invalidInput(.write("a base line comes before every event: the base lines of a trimmed log's export begin it"))
        }
        throw error
      }
      var request = try Write(decoding: &members, door: .importLine, defaultStream: defaultStream).request
      request.origin = origin
      // A stream the scanner did not know to be the last line's is the last line's now.
      if members.knownStream == nil, members.present.contains(.stream) {
        lastStream = (request.stream.bytes, request.stream)
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
    func outcome(_ members: Result<WriteMembers, MsglogError>) -> String {
      switch members {
      case .failure(let error): return "error: \(error)"
      case .success(var members):
        do {
          return "\(try Write(decoding: &members, door: .importLine, defaultStream: "main").request)"
        } catch {
          return "error: \(error)"
        }
      }
    }
    guard let scanned = Scanner.members(line, lastStream: nil) else { return true }
    let general = Result { () throws(MsglogError) in try generalMembers(line) }
    return outcome(.success(scanned)) == outcome(general)
  }

  /// The members of a line by the general parser: any valid JSON, refused
  /// with the parser's message when invalid.
  static func generalMembers(_ line: UnsafeRawBufferPointer) throws(MsglogError) -> WriteMembers {
    try generalMembersAndOrigin(line).0
  }

  /// `generalMembers`, and the event's origin when the line has one (an
  /// exported event a replica's change became: import's own member, an
  /// object the scanner leaves to this parser).
  static func generalMembersAndOrigin(_ line: UnsafeRawBufferPointer) throws(MsglogError) -> (
    WriteMembers, Origin?
  ) {
    let value: JSONValue
    do {
      value = try JSONParser.parse(Array(line))
    } catch {
      throw .invalidInput(.write("\(error)"))
    }
    guard case .object(let members) = value else {
      throw .invalidInput(.write("expected a JSON object, found \(value.kindName)"))
    }
    var origin: Origin? = nil
    if let member = members.last(where: { $0.0 == "origin" }) { origin = try Self.origin(member.1) }
    return (try WriteMembers(object: members, skipping: ["origin"]), origin)
  }

  /// `"origin":{"replica":"…","change":N,"made":"…"}`, as `export` writes it.
  static func origin(_ value: JSONValue) throws(MsglogError) -> Origin {
    func refused(_ why: String) -> MsglogError { .invalidInput(.write("\"origin\" \(why)")) }
    guard case .object(let members) = value else { throw refused("must be an object, not \(value.kindName)") }
    var replica: ItemID? = nil
    var change: UInt64? = nil
    var made: Timestamp? = nil
    for (name, member) in members {
      switch (name, member) {
      case ("replica", .string(let text)): replica = ItemID(canonical: text)
      case ("change", .number(let text)): change = Limits.parseNumber(text)
      case ("made", .string(let text)): made = Timestamp(rfc3339: text)
      default: throw refused("has no member \"\(name)\" of \(member.kindName)")
      }
    }
    guard let replica else { throw refused("needs \"replica\", a UUID") }
    guard let change, change >= 1 else { throw refused("needs \"change\", a whole number from 1") }
    guard let made else { throw refused("needs \"made\", an RFC 3339 timestamp") }
    return Origin(replica: replica, change: change, made: made)
  }

  /// The byte-level reader of plain lines (see `ImportLine`): nil for any
  /// line it does not fully understand.
  ///
  /// It walks the line through a pointer, with no bounds check per byte
  /// (the end is checked instead), and reads a string's simple escapes
  /// (`\"`, `\\`, `\/`, `\b`, `\f`, `\n`, `\r`, `\t`) itself, as the
  /// general parser does; a `\u` escape is left to the general parser.
  enum Scanner {
    static func members(_ line: UnsafeRawBufferPointer, lastStream: (bytes: [UInt8], name: StreamName)?)
      -> WriteMembers?
    {
      var scratch: [UInt8] = []
      return members(line, lastStream: lastStream, scratch: &scratch)
    }

    /// `scratch` holds an escaped string's bytes while they are read (kept
    /// by the caller from line to line).
    static func members(
      _ line: UnsafeRawBufferPointer, lastStream: (bytes: [UInt8], name: StreamName)?, scratch: inout [UInt8]
    ) -> WriteMembers? {
      var fields = WriteMembers()
      return scan(line, lastStream: lastStream, scratch: &scratch, into: &fields) ? fields : nil
    }

    /// `members`, read into `fields` (new, empty) where the caller keeps
    /// them: whether the scanner takes the line. Returned, the sixteen
    /// members were copied on their way out and the original destroyed
    /// (an import's parser thread: 172.6 M instructions on clownschool_flat
    /// then, 145.8 M so).
    static func scan(
      _ line: UnsafeRawBufferPointer, lastStream: (bytes: [UInt8], name: StreamName)?, scratch: inout [UInt8],
      into fields: inout WriteMembers
    ) -> Bool {
      assert(fields.present.isEmpty, "the scanner reads a line into members of its own")
      guard let base = line.baseAddress else { return false }
      var cursor = Cursor(start: base.assumingMemoryBound(to: UInt8.self), count: line.count)
      cursor.skipSpace()
      guard cursor.take(UInt8(ascii: "{")) else { return false }
      cursor.skipSpace()
      if cursor.take(UInt8(ascii: "}")) {
        cursor.skipSpace()
        return cursor.atEnd
      }
      while true {
        cursor.skipSpace()
        guard cursor.peek == UInt8(ascii: "\""), let name = cursor.plainString(), let key = WriteMember(name),
          !fields.present.contains(key)
        else { return false }
        cursor.skipSpace()
        guard cursor.take(UInt8(ascii: ":")) else { return false }
        cursor.skipSpace()
        guard let first = cursor.peek else { return false }
        if first == UInt8(ascii: "\"") {
          let start = cursor.p
          if let bytes = cursor.plainString() {
            if key == .id, let id = ItemID(canonicalUTF8: bytes) {
              fields.set(key, .uuid(id))
            } else if key == .time, let time = Timestamp(rfc3339UTF8: bytes) {
              fields.set(key, .timestamp(time))
            } else if key == .stream, let last = lastStream, last.bytes.elementsEqual(bytes) {
              fields.set(key, .string(last.name.text))
              fields.knownStream = last.name
            } else {
              guard let text = makeString(bytes) else { return false }
              fields.set(key, .string(text))
            }
          } else {
            // Escapes (or a control character, or no closing quote).
            cursor.p = start
            guard cursor.escapedString(into: &scratch),
              let text = scratch.withUnsafeBytes({ makeString($0) })
            else { return false }
            fields.set(key, .string(text))
          }
        } else if Cursor.isDigit(first) {
          let start = cursor.p
          while let b = cursor.peek, Cursor.isDigit(b) { cursor.p += 1 }
          let digits = cursor.p - start
          // A leading zero, a fraction or an exponent: the general parser decides.
          if digits > 1 && first == 0x30 { return false }
          if let b = cursor.peek, b == UInt8(ascii: ".") || b == UInt8(ascii: "e") || b == UInt8(ascii: "E") {
            return false
          }
          var value: UInt64? = nil
          if digits <= 19 {
            var v: UInt64 = 0
            for j in 0..<digits { v = v &* 10 &+ UInt64(start[j] &- 0x30) }
            value = v <= Limits.maxNumber ? v : nil
          }
          fields.set(key, .number(value))
        } else {
          return false
        }
        cursor.skipSpace()
        if cursor.take(UInt8(ascii: ",")) { continue }
        guard cursor.take(UInt8(ascii: "}")) else { return false }
        cursor.skipSpace()
        return cursor.atEnd
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
