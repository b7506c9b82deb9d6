/// Writes JSON — objects, arrays, strings, numbers, booleans, null, nested
/// to any depth up to 64 — as bytes into one buffer.
///
/// Bytes, not a String: `--json list` of a million items writes every field
/// straight into this buffer (no String per field, per number or per id),
/// which made it three times faster. A long document is written out in
/// pieces: `removeAll()` empties the buffer but keeps its capacity and the
/// place in the document, so the next member still gets its comma.
///
/// Members come out in the order they are written: the stable order the
/// documents in docs/REFERENCE.md show. Only string escaping is done (quote,
/// backslash, C0 controls), so `--json` output is the exact text.
package struct JSONWriter {
  package private(set) var bytes: [UInt8] = []
  /// Open containers, innermost last as the lowest `depth` bits of `started`.
  private var depth = 0
  /// Bit `d`: the container at depth `d` has a member already (the next needs a comma).
  private var started: UInt64 = 0
  /// A key was just written: its value follows without a comma.
  private var afterKey = false

  package init(capacity: Int = 256) { bytes.reserveCapacity(capacity) }

  /// The bytes so far, as text.
  package var text: String { String(decoding: bytes, as: UTF8.self) }

  /// Empties the buffer (keeping its capacity) after its bytes were written
  /// out; the writer stays where it was in the document.
  package mutating func removeAll() { bytes.removeAll(keepingCapacity: true) }

  /// Takes the bytes and starts afresh (a whole document, written at once).
  package mutating func take() -> [UInt8] {
    precondition(depth == 0, "a JSON document taken before its containers were closed")
    defer { bytes = [] }
    return bytes
  }

  // MARK: - Containers

  package mutating func beginObject() { open(UInt8(ascii: "{")) }
  package mutating func endObject() { close(UInt8(ascii: "}")) }
  package mutating func beginArray() { open(UInt8(ascii: "[")) }
  package mutating func endArray() { close(UInt8(ascii: "]")) }

  /// `{ … }` around what `body` writes.
  package mutating func object(_ body: (inout JSONWriter) -> Void) {
    beginObject()
    body(&self)
    endObject()
  }

  /// `[ … ]` around what `body` writes.
  package mutating func array(_ body: (inout JSONWriter) -> Void) {
    beginArray()
    body(&self)
    endArray()
  }

  private mutating func open(_ bracket: UInt8) {
    separate()
    precondition(depth < 64, "JSON nested deeper than 64")
    bytes.append(bracket)
    started &= ~(1 << UInt64(depth))
    depth += 1
  }

  private mutating func close(_ bracket: UInt8) {
    precondition(depth > 0 && !afterKey, "a JSON container closed that was not open, or a key without its value")
    depth -= 1
    bytes.append(bracket)
  }

  /// The comma before a value or key that is not its container's first.
  @inline(__always) private mutating func separate() {
    if afterKey {
      afterKey = false
      return
    }
    guard depth > 0 else { return }
    let bit: UInt64 = 1 << UInt64(depth - 1)
    if started & bit != 0 { bytes.append(UInt8(ascii: ",")) } else { started |= bit }
  }

  // MARK: - Keys and values

  /// The name of the next member of the open object.
  package mutating func key(_ name: StaticString) {
    separate()
    bytes.append(UInt8(ascii: "\""))
    bytes.append(contentsOf: UnsafeBufferPointer(start: name.utf8Start, count: name.utf8CodeUnitCount))
    bytes.append(UInt8(ascii: "\""))
    bytes.append(UInt8(ascii: ":"))
    afterKey = true
  }

  package mutating func value(_ text: String) {
    separate()
    JSONWriter.appendString(text, to: &bytes)
  }

  package mutating func value(_ number: UInt64) {
    separate()
    JSONWriter.appendDecimal(number, to: &bytes)
  }

  package mutating func value(_ number: Int) {
    separate()
    if number < 0 { bytes.append(UInt8(ascii: "-")) }
    JSONWriter.appendDecimal(UInt64(number.magnitude), to: &bytes)
  }

  package mutating func value(_ flag: Bool) {
    separate()
    bytes.append(contentsOf: flag ? "true".utf8 : "false".utf8)
  }

  package mutating func null() {
    separate()
    bytes.append(contentsOf: "null".utf8)
  }

  package mutating func value(_ stream: StreamName) { value(stream.text) }

  /// The id in canonical form.
  package mutating func value(_ id: ItemID) {
    separate()
    JSONWriter.appendQuoted(id, to: &bytes)
  }

  /// The instant in RFC 3339 (UTC, milliseconds).
  package mutating func value(_ time: Timestamp) {
    separate()
    bytes.append(UInt8(ascii: "\""))
    time.writeRFC3339(to: &bytes)
    bytes.append(UInt8(ascii: "\""))
  }

  // Members of a fixed layout: the caller writes the key with its quotes,
  // colon and any comma before it as one piece (`",\"seq\":"`), in an
  // object whose members always come in one order. One append for what a
  // `member` does in four, which counts in a list of a million items.

  package mutating func laidOut(_ key: StaticString, _ number: UInt64) {
    piece(key)
    JSONWriter.appendDecimal(number, to: &bytes)
  }

  package mutating func laidOut(_ key: StaticString, _ text: String) {
    piece(key)
    JSONWriter.appendString(text, to: &bytes)
  }

  /// A string member whose value is UTF-8 bytes (valid: a record's, checked).
  package mutating func laidOut(_ key: StaticString, utf8: UnsafeRawBufferPointer) {
    piece(key)
    bytes.append(UInt8(ascii: "\""))
    JSONWriter.appendEscaped(utf8.assumingMemoryBound(to: UInt8.self), to: &bytes)
    bytes.append(UInt8(ascii: "\""))
  }

  package mutating func laidOut(_ key: StaticString, _ id: ItemID) {
    piece(key)
    JSONWriter.appendQuoted(id, to: &bytes)
  }

  package mutating func laidOut(_ key: StaticString, _ flag: Bool) {
    piece(key)
    bytes.append(contentsOf: flag ? "true".utf8 : "false".utf8)
  }

  package mutating func laidOut(_ key: StaticString, _ time: Timestamp) {
    piece(key)
    bytes.append(UInt8(ascii: "\""))
    time.writeRFC3339(to: &bytes)
    bytes.append(UInt8(ascii: "\""))
  }

  /// A key piece, inside an open object, which then has members.
  private mutating func piece(_ key: StaticString) {
    precondition(depth > 0 && !afterKey, "a laid-out member outside an object")
    started |= 1 << UInt64(depth - 1)
    bytes.append(contentsOf: UnsafeBufferPointer(start: key.utf8Start, count: key.utf8CodeUnitCount))
  }

  // Members: a key and its value.
  package mutating func member(_ name: StaticString, _ text: String) { key(name); value(text) }
  package mutating func member(_ name: StaticString, _ number: UInt64) { key(name); value(number) }
  package mutating func member(_ name: StaticString, _ number: Int) { key(name); value(number) }
  package mutating func member(_ name: StaticString, _ flag: Bool) { key(name); value(flag) }
  package mutating func member(_ name: StaticString, _ stream: StreamName) { key(name); value(stream) }
  package mutating func member(_ name: StaticString, _ id: ItemID) { key(name); value(id) }
  package mutating func member(_ name: StaticString, _ time: Timestamp) { key(name); value(time) }

  /// Bytes that are not JSON values, between documents: the newline after a
  /// JSON line, the `id:`/`data:` framing of a Server-Sent Event.
  /// Bytes as they are, outside any JSON: what a body that is not JSON
  /// (a pull's record frames) is written through.
  package mutating func raw(bytes: UnsafeRawBufferPointer) {
    bytes.withMemoryRebound(to: UInt8.self) { self.bytes.append(contentsOf: $0) }
  }

  package mutating func raw(_ text: StaticString) {
    precondition(depth == 0, "raw bytes inside a JSON document")
    bytes.append(contentsOf: UnsafeBufferPointer(start: text.utf8Start, count: text.utf8CodeUnitCount))
  }

  /// A decimal number between documents (a Server-Sent Event's `id:`).
  package mutating func raw(_ number: UInt64) {
    precondition(depth == 0, "raw bytes inside a JSON document")
    JSONWriter.appendDecimal(number, to: &bytes)
  }

  // MARK: - Encoding

  /// The id in canonical form, in quotes: written on the stack and
  /// appended once.
  static func appendQuoted(_ id: ItemID, to out: inout [UInt8]) {
    withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 38) { text in
      text[0] = UInt8(ascii: "\"")
      id.writeText(into: text.baseAddress! + 1)
      text[37] = UInt8(ascii: "\"")
      out.append(contentsOf: UnsafeBufferPointer(text))
    }
  }

  /// JSON string escaping only: quote, backslash and C0 controls; all else is
  /// written as UTF-8, so `--json` output is the exact text.
  package static func appendString(_ value: String, to out: inout [UInt8]) {
    out.append(UInt8(ascii: "\""))
    var value = value
    value.withUTF8 { appendEscaped($0, to: &out) }
    out.append(UInt8(ascii: "\""))
  }

  /// Valid UTF-8 in, escaped JSON string contents out (no quotes).
  static func appendEscaped(_ utf8: UnsafeBufferPointer<UInt8>, to out: inout [UInt8]) {
    var plain = 0  // start of the run of bytes copied as they are
    for (i, b) in utf8.enumerated() where b < 0x20 || b == 0x22 || b == 0x5C {
      out.append(contentsOf: UnsafeBufferPointer(rebasing: utf8[plain..<i]))
      plain = i + 1
      out.append(UInt8(ascii: "\\"))
      switch b {
      case 0x22, 0x5C: out.append(b)
      case 0x0A: out.append(UInt8(ascii: "n"))
      case 0x0D: out.append(UInt8(ascii: "r"))
      case 0x09: out.append(UInt8(ascii: "t"))
      case 0x08: out.append(UInt8(ascii: "b"))
      case 0x0C: out.append(UInt8(ascii: "f"))
      default:
        out.append(contentsOf: [UInt8(ascii: "u"), 0x30, 0x30, Hex.digit(b >> 4), Hex.digit(b)])
      }
    }
    out.append(contentsOf: UnsafeBufferPointer(rebasing: utf8[plain...]))
  }

  /// `value` in decimal.
  package static func appendDecimal(_ value: UInt64, to out: inout [UInt8]) {
    if value < 10 {
      out.append(UInt8(truncatingIfNeeded: value) &+ 0x30)
      return
    }
    // UInt64.max has 20 digits, written from the right into 24 bytes on
    // the stack (three words: as cheap to clear as a tuple of them).
    var digits = InlineArray<3, UInt64>(repeating: 0)
    withUnsafeMutableBytes(of: &digits) { raw in
      var v = value
      var i = raw.count
      while v > 0 {
        i -= 1
        raw[i] = UInt8(truncatingIfNeeded: v % 10) &+ 0x30
        v /= 10
      }
      out.append(contentsOf: UnsafeRawBufferPointer(rebasing: raw[i...]))
    }
  }
}
