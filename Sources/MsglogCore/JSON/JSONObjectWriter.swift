/// Builds one JSON object with members in the order they are added, the
/// stable order docs/REFERENCE.md shows.
///
/// Bytes, not a String: `--json list` of a million items writes every field
/// straight into one reused buffer (no String per field, per number or per
/// id), which made it three times faster.
package struct JSONObjectWriter {
  package private(set) var bytes: [UInt8]
  var first = true

  package init() {
    bytes = []
    bytes.reserveCapacity(128)
    bytes.append(UInt8(ascii: "{"))
  }

  /// Starts an object in `storage`, emptied but keeping its capacity: a
  /// loop over items reuses one buffer (`take()` hands it back).
  package init(reusing storage: inout [UInt8]) {
    storage.removeAll(keepingCapacity: true)
    bytes = storage
    storage = []
    bytes.append(UInt8(ascii: "{"))
  }

  /// The object so far as text.
  package var text: String { String(decoding: bytes, as: UTF8.self) }

  mutating func key(_ name: StaticString) {
    if !first { bytes.append(UInt8(ascii: ",")) }
    first = false
    bytes.append(UInt8(ascii: "\""))
    bytes.append(contentsOf: UnsafeBufferPointer(start: name.utf8Start, count: name.utf8CodeUnitCount))
    bytes.append(UInt8(ascii: "\""))
    bytes.append(UInt8(ascii: ":"))
  }

  package mutating func add(_ name: StaticString, _ value: String) {
    key(name)
    JSONObjectWriter.appendString(value, to: &bytes)
  }

  package mutating func add(_ name: StaticString, _ value: StreamName) {
    add(name, value.text)
  }

  package mutating func add(_ name: StaticString, _ value: UInt64) {
    key(name)
    JSONObjectWriter.appendDecimal(value, to: &bytes)
  }

  package mutating func add(_ name: StaticString, _ value: Int) {
    key(name)
    if value < 0 { bytes.append(UInt8(ascii: "-")) }
    JSONObjectWriter.appendDecimal(value.magnitude.asUInt64, to: &bytes)
  }

  /// The id in canonical form.
  package mutating func add(_ name: StaticString, _ id: ItemID) {
    key(name)
    bytes.append(UInt8(ascii: "\""))
    let start = bytes.count
    bytes.append(contentsOf: repeatElement(0, count: 36))
    bytes.withUnsafeMutableBufferPointer { id.writeText(into: $0.baseAddress! + start) }
    bytes.append(UInt8(ascii: "\""))
  }

  /// The instant in RFC 3339.
  package mutating func add(_ name: StaticString, _ time: Timestamp) {
    key(name)
    bytes.append(UInt8(ascii: "\""))
    time.writeRFC3339(to: &bytes)
    bytes.append(UInt8(ascii: "\""))
  }

  /// Adds a member whose value is already JSON.
  package mutating func addRaw(_ name: StaticString, _ json: String) {
    key(name)
    bytes.append(contentsOf: json.utf8)
  }

  /// Ends the object and returns it as text.
  package mutating func close() -> String {
    bytes.append(UInt8(ascii: "}"))
    return text
  }

  /// Ends the object and hands its bytes over (for `init(reusing:)`).
  package mutating func closeBytes() -> [UInt8] {
    bytes.append(UInt8(ascii: "}"))
    defer { bytes = [] }
    return bytes
  }

  /// JSON string escaping only: quote, backslash and C0 controls; all else is
  /// written as UTF-8, so `--json` output is the exact text.
  package static func appendString(_ value: String, to out: inout [UInt8]) {
    out.append(UInt8(ascii: "\""))
    var value = value
    value.withUTF8 { appendEscaped($0, to: &out) }
    out.append(UInt8(ascii: "\""))
  }

  /// The same, into a String.
  package static func appendString(_ value: String, to out: inout String) {
    var bytes: [UInt8] = []
    appendString(value, to: &bytes)
    out += String(decoding: bytes, as: UTF8.self)
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

extension UInt {
  var asUInt64: UInt64 { UInt64(self) }
}
