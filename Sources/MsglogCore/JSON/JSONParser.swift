/// A parsed JSON value. Numbers keep their text, so integers up to 2^63-1
/// are read exactly and a float is told apart from an integer.
public enum JSONValue: Equatable, Sendable {
  case null
  case bool(Bool)
  case number(String)
  case string(String)
  case array([JSONValue])
  /// Members in document order; duplicate keys are refused by the parser.
  case object([(String, JSONValue)])

  public static func == (a: JSONValue, b: JSONValue) -> Bool {
    switch (a, b) {
    case (.null, .null): return true
    case (.bool(let x), .bool(let y)): return x == y
    case (.number(let x), .number(let y)): return x == y
    case (.string(let x), .string(let y)): return x == y
    case (.array(let x), .array(let y)): return x == y
    case (.object(let x), .object(let y)):
      return x.count == y.count && zip(x, y).allSatisfy { $0.0 == $1.0 && $0.1 == $1.1 }
    default: return false
    }
  }

  /// What kind of value this is, for error messages.
  public var kindName: String {
    switch self {
    case .null: return "null"
    case .bool: return "a boolean"
    case .number: return "a number"
    case .string: return "a string"
    case .array: return "an array"
    case .object: return "an object"
    }
  }
}

/// A strict RFC 8259 parser for one document (an import line).
///
/// Written here rather than taken from Foundation so that numbers stay exact,
/// duplicate keys are caught, invalid UTF-8 and lone surrogates are refused,
/// and nesting is bounded (the fuzzer drives it with hostile input).
public struct JSONParser {
  public struct Error: Swift.Error, Equatable, CustomStringConvertible, Sendable {
    public var offset: Int
    public var reason: String
    public var description: String { "invalid JSON at byte \(offset + 1): \(reason)" }
  }

  static let maxDepth = 64
  let bytes: [UInt8]
  var i = 0

  public static func parse(_ bytes: [UInt8]) throws(Error) -> JSONValue {
    var parser = JSONParser(bytes: bytes)
    parser.skipSpace()
    let value = try parser.value(depth: 0)
    parser.skipSpace()
    guard parser.i == bytes.count else { throw parser.fail("unexpected text after the value") }
    return value
  }

  public static func parse(_ text: String) throws(Error) -> JSONValue { try parse(Array(text.utf8)) }

  init(bytes: [UInt8]) { self.bytes = bytes }

  func fail(_ reason: String) -> Error { Error(offset: min(i, bytes.count), reason: reason) }

  mutating func skipSpace() {
    while i < bytes.count, bytes[i] == 0x20 || bytes[i] == 0x09 || bytes[i] == 0x0A || bytes[i] == 0x0D {
      i += 1
    }
  }

  mutating func value(depth: Int) throws(Error) -> JSONValue {
    guard depth < JSONParser.maxDepth else { throw fail("nested too deeply") }
    guard i < bytes.count else { throw fail("unexpected end of input") }
    switch bytes[i] {
    case UInt8(ascii: "{"): return try object(depth: depth)
    case UInt8(ascii: "["): return try array(depth: depth)
    case UInt8(ascii: "\""): return .string(try string())
    case UInt8(ascii: "t"): try literal("true"); return .bool(true)
    case UInt8(ascii: "f"): try literal("false"); return .bool(false)
    case UInt8(ascii: "n"): try literal("null"); return .null
    case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): return .number(try number())
    default: throw fail("unexpected character")
    }
  }

  mutating func literal(_ word: String) throws(Error) {
    for byte in word.utf8 {
      guard i < bytes.count, bytes[i] == byte else { throw fail("invalid literal") }
      i += 1
    }
  }

  mutating func object(depth: Int) throws(Error) -> JSONValue {
    i += 1
    var members: [(String, JSONValue)] = []
    var keys: Set<String> = []
    skipSpace()
    if i < bytes.count, bytes[i] == UInt8(ascii: "}") {
      i += 1
      return .object(members)
    }
    while true {
      skipSpace()
      guard i < bytes.count, bytes[i] == UInt8(ascii: "\"") else { throw fail("expected a key") }
      let keyStart = i
      let key = try string()
      guard keys.insert(key).inserted else {
        i = keyStart
        throw fail("duplicate key \"\(key)\"")
      }
      skipSpace()
      guard i < bytes.count, bytes[i] == UInt8(ascii: ":") else { throw fail("expected ':'") }
      i += 1
      skipSpace()
      members.append((key, try value(depth: depth + 1)))
      skipSpace()
      guard i < bytes.count else { throw fail("unexpected end of input") }
      if bytes[i] == UInt8(ascii: ",") {
        i += 1
        continue
      }
      guard bytes[i] == UInt8(ascii: "}") else { throw fail("expected ',' or '}'") }
      i += 1
      return .object(members)
    }
  }

  mutating func array(depth: Int) throws(Error) -> JSONValue {
    i += 1
    var elements: [JSONValue] = []
    skipSpace()
    if i < bytes.count, bytes[i] == UInt8(ascii: "]") {
      i += 1
      return .array(elements)
    }
    while true {
      skipSpace()
      elements.append(try value(depth: depth + 1))
      skipSpace()
      guard i < bytes.count else { throw fail("unexpected end of input") }
      if bytes[i] == UInt8(ascii: ",") {
        i += 1
        continue
      }
      guard bytes[i] == UInt8(ascii: "]") else { throw fail("expected ',' or ']'") }
      i += 1
      return .array(elements)
    }
  }

  mutating func number() throws(Error) -> String {
    let start = i
    if bytes[i] == UInt8(ascii: "-") { i += 1 }
    func digits(_ p: inout JSONParser) -> Int {
      let s = p.i
      while p.i < p.bytes.count, (0x30...0x39).contains(p.bytes[p.i]) { p.i += 1 }
      return p.i - s
    }
    let intStart = i
    let n = digits(&self)
    guard n > 0 else { throw fail("expected digits") }
    guard !(n > 1 && bytes[intStart] == UInt8(ascii: "0")) else { throw fail("leading zero in a number") }
    if i < bytes.count, bytes[i] == UInt8(ascii: ".") {
      i += 1
      guard digits(&self) > 0 else { throw fail("expected digits after '.'") }
    }
    if i < bytes.count, bytes[i] == UInt8(ascii: "e") || bytes[i] == UInt8(ascii: "E") {
      i += 1
      if i < bytes.count, bytes[i] == UInt8(ascii: "+") || bytes[i] == UInt8(ascii: "-") { i += 1 }
      guard digits(&self) > 0 else { throw fail("expected digits in the exponent") }
    }
    return String(decoding: bytes[start..<i], as: UTF8.self)
  }

  mutating func string() throws(Error) -> String {
    i += 1
    var out: [UInt8] = []
    var runStart = i
    while true {
      guard i < bytes.count else { throw fail("unterminated string") }
      let b = bytes[i]
      if b == UInt8(ascii: "\"") {
        out.append(contentsOf: bytes[runStart..<i])
        i += 1
        break
      }
      if b < 0x20 { throw fail("control character in a string") }
      if b == UInt8(ascii: "\\") {
        out.append(contentsOf: bytes[runStart..<i])
        i += 1
        guard i < bytes.count else { throw fail("unterminated escape") }
        let e = bytes[i]
        i += 1
        switch e {
        case UInt8(ascii: "\""): out.append(0x22)
        case UInt8(ascii: "\\"): out.append(0x5C)
        case UInt8(ascii: "/"): out.append(0x2F)
        case UInt8(ascii: "b"): out.append(0x08)
        case UInt8(ascii: "f"): out.append(0x0C)
        case UInt8(ascii: "n"): out.append(0x0A)
        case UInt8(ascii: "r"): out.append(0x0D)
        case UInt8(ascii: "t"): out.append(0x09)
        case UInt8(ascii: "u"):
          var scalar = try hex4()
          if (0xD800..<0xDC00).contains(scalar) {
            guard i + 1 < bytes.count, bytes[i] == UInt8(ascii: "\\"), bytes[i + 1] == UInt8(ascii: "u")
            else { throw fail("lone surrogate in \\u escape") }
            i += 2
            let low = try hex4()
            guard (0xDC00..<0xE000).contains(low) else { throw fail("lone surrogate in \\u escape") }
            scalar = 0x10000 + ((scalar - 0xD800) << 10) + (low - 0xDC00)
          } else if (0xDC00..<0xE000).contains(scalar) {
            throw fail("lone surrogate in \\u escape")
          }
          out.append(contentsOf: String(Character(Unicode.Scalar(scalar)!)).utf8)
        default: throw fail("invalid escape")
        }
        runStart = i
        continue
      }
      i += 1
    }
    guard let s = String(validating: out, as: UTF8.self) else { throw fail("string is not valid UTF-8") }
    return s
  }

  mutating func hex4() throws(Error) -> UInt32 {
    guard i + 4 <= bytes.count else { throw fail("short \\u escape") }
    var v: UInt32 = 0
    for _ in 0..<4 {
      let b = bytes[i]
      let d: UInt32
      switch b {
      case 0x30...0x39: d = UInt32(b - 0x30)
      case 0x41...0x46: d = UInt32(b - 0x41 + 10)
      case 0x61...0x66: d = UInt32(b - 0x61 + 10)
      default: throw fail("invalid \\u escape")
      }
      v = v << 4 | d
      i += 1
    }
    return v
  }
}

/// Builds one JSON object with members in the order they are added, the
/// stable order SPEC.md shows.
///
/// Bytes, not a String: `--json list` of a million items writes every field
/// straight into one reused buffer (no String per field, per number or per
/// id), which made it three times faster.
public struct JSONObjectWriter {
  public private(set) var bytes: [UInt8]
  var first = true

  public init() {
    bytes = []
    bytes.reserveCapacity(128)
    bytes.append(UInt8(ascii: "{"))
  }

  /// Starts an object in `storage`, emptied but keeping its capacity: a
  /// loop over items reuses one buffer (`take()` hands it back).
  public init(reusing storage: inout [UInt8]) {
    storage.removeAll(keepingCapacity: true)
    bytes = storage
    storage = []
    bytes.append(UInt8(ascii: "{"))
  }

  /// The object so far as text.
  public var text: String { String(decoding: bytes, as: UTF8.self) }

  mutating func key(_ name: StaticString) {
    if !first { bytes.append(UInt8(ascii: ",")) }
    first = false
    bytes.append(UInt8(ascii: "\""))
    bytes.append(contentsOf: UnsafeBufferPointer(start: name.utf8Start, count: name.utf8CodeUnitCount))
    bytes.append(UInt8(ascii: "\""))
    bytes.append(UInt8(ascii: ":"))
  }

  public mutating func add(_ name: StaticString, _ value: String) {
    key(name)
    JSONObjectWriter.appendString(value, to: &bytes)
  }

  public mutating func add(_ name: StaticString, _ value: StreamName) {
    add(name, value.text)
  }

  public mutating func add(_ name: StaticString, _ value: UInt64) {
    key(name)
    JSONObjectWriter.appendDecimal(value, to: &bytes)
  }

  public mutating func add(_ name: StaticString, _ value: Int) {
    key(name)
    if value < 0 { bytes.append(UInt8(ascii: "-")) }
    JSONObjectWriter.appendDecimal(value.magnitude.asUInt64, to: &bytes)
  }

  /// The id in canonical form.
  public mutating func add(_ name: StaticString, _ id: ItemID) {
    key(name)
    bytes.append(UInt8(ascii: "\""))
    let start = bytes.count
    bytes.append(contentsOf: repeatElement(0, count: 36))
    bytes.withUnsafeMutableBufferPointer { id.writeText(into: $0.baseAddress! + start) }
    bytes.append(UInt8(ascii: "\""))
  }

  /// The instant in RFC 3339.
  public mutating func add(_ name: StaticString, _ time: Timestamp) {
    key(name)
    bytes.append(UInt8(ascii: "\""))
    time.writeRFC3339(to: &bytes)
    bytes.append(UInt8(ascii: "\""))
  }

  /// Adds a member whose value is already JSON.
  public mutating func addRaw(_ name: StaticString, _ json: String) {
    key(name)
    bytes.append(contentsOf: json.utf8)
  }

  /// Ends the object and returns it as text.
  public mutating func close() -> String {
    bytes.append(UInt8(ascii: "}"))
    return text
  }

  /// Ends the object and hands its bytes over (for `init(reusing:)`).
  public mutating func closeBytes() -> [UInt8] {
    bytes.append(UInt8(ascii: "}"))
    defer { bytes = [] }
    return bytes
  }

  /// JSON string escaping only: quote, backslash and C0 controls; all else is
  /// written as UTF-8, so `--json` output is the exact text.
  public static func appendString(_ value: String, to out: inout [UInt8]) {
    out.append(UInt8(ascii: "\""))
    var value = value
    value.withUTF8 { appendEscaped($0, to: &out) }
    out.append(UInt8(ascii: "\""))
  }

  /// The same, into a String.
  public static func appendString(_ value: String, to out: inout String) {
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
        let digits: StaticString = "0123456789abcdef"
        out.append(contentsOf: [UInt8(ascii: "u"), 0x30, 0x30, digits.utf8Start[Int(b >> 4)], digits.utf8Start[Int(b & 0xF)]])
      }
    }
    out.append(contentsOf: UnsafeBufferPointer(rebasing: utf8[plain...]))
  }

  /// `value` in decimal.
  public static func appendDecimal(_ value: UInt64, to out: inout [UInt8]) {
    if value < 10 {
      out.append(UInt8(truncatingIfNeeded: value) &+ 0x30)
      return
    }
    var digits: (UInt64, UInt64, UInt64) = (0, 0, 0)  // 24 bytes: room for 20 digits
    withUnsafeMutableBytes(of: &digits) { raw in
      var v = value
      var i = 24
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
