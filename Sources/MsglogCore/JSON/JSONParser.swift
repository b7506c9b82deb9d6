/// A strict RFC 8259 parser for one document (an import line).
///
/// Written here rather than taken from Foundation so that numbers stay exact,
/// duplicate keys are caught, invalid UTF-8 and lone surrogates are refused,
/// and nesting is bounded (the fuzzer drives it with hostile input).
package struct JSONParser {
  package struct Error: Swift.Error, Equatable, CustomStringConvertible, Sendable {
    package var offset: Int
    package var reason: String
    package var description: String { "invalid JSON at byte \(offset + 1): \(reason)" }
  }

  static let maxDepth = 64
  let bytes: [UInt8]
  var i = 0

  package static func parse(_ bytes: [UInt8]) throws(Error) -> JSONValue {
    var parser = JSONParser(bytes: bytes)
    parser.skipSpace()
    let value = try parser.value(depth: 0)
    parser.skipSpace()
    guard parser.i == bytes.count else { throw parser.fail("unexpected text after the value") }
    return value
  }

  package static func parse(_ text: String) throws(Error) -> JSONValue { try parse(Array(text.utf8)) }

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
      i = plainRunEnd(from: i)
      guard i < bytes.count else { throw fail("unterminated string") }
      let b = bytes[i]
      if b == UInt8(ascii: "\"") {
        out.append(contentsOf: bytes[runStart..<i])
        i += 1
        break
      }
      if b < 0x20 { throw fail("control character in a string") }
      // A backslash (where else a plain run ends): the run before it, then
      // the byte or scalar it escapes.
      assert(b == UInt8(ascii: "\\"))
      out.append(contentsOf: bytes[runStart..<i])
      i += 1
      guard i < bytes.count else { throw fail("unterminated escape") }
      let e = bytes[i]
      i += 1
      if let byte = Self.unescaped(e) {
        out.append(byte)
        runStart = i
        continue
      }
      guard e == UInt8(ascii: "u") else { throw fail("invalid escape") }
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
      runStart = i
    }
    guard let s = String(validating: out, as: UTF8.self) else { throw fail("string is not valid UTF-8") }
    return s
  }

  /// The end of the plain run from `start`: the first quote, backslash or
  /// control character, or the end of the input.
  ///
  /// Stepped through a pointer: a debug build reads an array's elements
  /// with a retain and a release each, and took 40 ms to parse a 1 MB
  /// message's body.
  private func plainRunEnd(from start: Int) -> Int {
    bytes.withUnsafeBufferPointer { b in
      var j = start
      while j < b.count {
        let c = b[j]
        if c == UInt8(ascii: "\"") || c == UInt8(ascii: "\\") || c < 0x20 { break }
        j += 1
      }
      return j
    }
  }

  /// The byte a two-character escape (`\n`, `\"`, …) stands for; nil for
  /// `\u` and for what is no escape. The import scanner reads these too.
  @inline(__always)
  static func unescaped(_ escape: UInt8) -> UInt8? {
    switch escape {
    case UInt8(ascii: "\""): 0x22
    case UInt8(ascii: "\\"): 0x5C
    case UInt8(ascii: "/"): 0x2F
    case UInt8(ascii: "b"): 0x08
    case UInt8(ascii: "f"): 0x0C
    case UInt8(ascii: "n"): 0x0A
    case UInt8(ascii: "r"): 0x0D
    case UInt8(ascii: "t"): 0x09
    default: nil
    }
  }

  mutating func hex4() throws(Error) -> UInt32 {
    guard i + 4 <= bytes.count else { throw fail("short \\u escape") }
    var v: UInt32 = 0
    for _ in 0..<4 {
      guard let d = Hex.value(of: bytes[i]) else { throw fail("invalid \\u escape") }
      v = v << 4 | UInt32(d)
      i += 1
    }
    return v
  }
}
