import Foundation
import MsglogCoreTestSupport
import Testing

@testable import MsglogCore

@Suite struct TerminalTextTests {
  @Test(arguments: [
    ("plain text", "plain text"),
    ("a\\b", "a\\\\b"),
    ("line\nbreak\r\ttab", "line\\nbreak\\r\\ttab"),
    ("\u{1B}[31mred\u{7}", "\\x1b[31mred\\x07"),
    ("nul\u{0}del\u{7F}", "nul\\x00del\\x7f"),
    ("c1\u{85}\u{9B}", "c1\\u{0085}\\u{009b}"),
    ("sep\u{2028}para\u{2029}", "sep\\u{2028}para\\u{2029}"),
    ("日本語 👋🏽 é", "日本語 👋🏽 é"),
  ])
  func escapes(input: String, expected: String) {
    #expect(TerminalText.escape(input) == expected)
    #expect(!TerminalText.escape(input).contains("\n"))
  }
}

@Suite struct JSONTests {
  @Test func parserHandlesEscapesAndNumbers() throws {
    #expect(try JSONParser.parse(#""\ud83d\udc4b \u00e9\/""#) == .string("👋 é/"))
    #expect(
      try JSONParser.parse("[0, -1.5e3, 9223372036854775807]")
        == .array([.number("0"), .number("-1.5e3"), .number("9223372036854775807")]))
    #expect(
      try JSONParser.parse(" {\"a\" : [true, false, null]} ")
        == .object([("a", .array([.bool(true), .bool(false), .null]))]))
  }

  @Test(arguments: [
    "", "{", "{\"a\":1,}", "[1,]", "01", "1.", "-", "\"\\ud800\"", "\"\\udc00x\"", "\"a\u{1}\"", "{\"a\":1,\"a\":2}",
    "tru", "nul", "{} x", "\"\\x\"", String(repeating: "[", count: 100) + String(repeating: "]", count: 100),
  ])
  func parserRefuses(_ text: String) {
    #expect(throws: JSONParser.Error.self) { try JSONParser.parse(text) }
  }

  @Test func parserRefusesInvalidUTF8() {
    #expect(throws: JSONParser.Error.self) { try JSONParser.parse([0x22, 0xFF, 0x22]) }
  }
}

@Suite struct ImportLineTests {
  func parse(_ line: String) throws -> WriteRequest {
    try ImportLine.parse(Array(line.utf8), defaultStream: "main")
  }

  @Test func readsEveryOp() throws {
    let id = ItemID(canonical: "3f2a1b4c-0000-4000-8000-00000000abcd")!
    #expect(
      try parse(#"{"op":"append","text":"hi","sender":"ann","stream":"s","id":"3F2A1B4C-0000-4000-8000-00000000ABCD"}"#)
        == WriteRequest(stream: "s", command: .insert(InsertRequest(text: "hi", sender: "ann", id: id))))
    #expect(
      try parse(#"{"op":"insert","index":2,"text":"x"}"#)
        == WriteRequest(stream: "main", command: .insert(InsertRequest(index: 2, text: "x"))))
    #expect(
      try parse(#"{"op":"remove","id":"3f2a1b4c"}"#)
        == WriteRequest(stream: "main", command: .remove(.prefix("3f2a1b4c"))))
    #expect(
      try parse(#"{"op":"move","from":3,"to":7}"#)
        == WriteRequest(stream: "main", command: .move(from: 3, to: 7, id: nil)))
  }

  @Test(arguments: [
    #"[]"#, #"{}"#, #"{"op":"append"}"#, #"{"op":"insert","text":"x"}"#,
    #"{"op":"insert","index":-1,"text":"x"}"#, #"{"op":"insert","index":1.0,"text":"x"}"#,
    #"{"op":"insert","index":"1","text":"x"}"#, #"{"op":"insert","index":9223372036854775808,"text":"x"}"#,
    #"{"op":"append","text":"x","sendr":"ann"}"#, #"{"op":"append","text":"x","from":1}"#,
    #"{"op":"remove"}"#, #"{"op":"remove","id":"abc"}"#, #"{"op":"move","from":1}"#, #"{"op":"jump"}"#,
    #"{"op":"append","text":"x","stream":""}"#, #"{"op":"append","text":"x","stream":"a\u0000b"}"#,
    #"{"op":"append","text":"x","time":"yesterday"}"#, #"{"op":"append","text":"x","id":"not-a-uuid"}"#,
    #"{"op":"append","text":"x","sender":null}"#,
  ])
  func refuses(_ line: String) {
    #expect(throws: MsglogError.self) { try parse(line) }
  }

  /// A line whose text breaks a limit is read, and refused by the ledger,
  /// where every door's text and sender are checked (`Limits.check`).
  @Test func theLedgerRefusesALineWithEmptyText() throws {
    let request = try parse(#"{"op":"append","text":""}"#)
    #expect(throws: MsglogError.invalidInput(.emptyText)) {
      try MemoryStore().write { writer in
        try LedgerSession(writer: writer, now: Timestamp(milliseconds: 0)).perform(request)
      }
    }
  }
}

/// Text that would make a line display in another order than it is stored
/// (bidirectional overrides and isolates, CVE-2021-42574), and column widths.
@Suite struct BidiAndWidthTests {
  @Test(arguments: Array(0x202A...0x202E) + Array(0x2066...0x2069))
  func bidirectionalControlsAreEscaped(_ value: Int) {
    let scalar = Unicode.Scalar(UInt32(value))!
    let hex = String(value, radix: 16)
    #expect(TerminalText.escape("a" + String(Character(scalar)) + "b") == "a\\u{\(hex)}b")
  }

  @Test func neighboursOfTheBidiControlsAreLeftAlone() {
    for value: UInt32 in [0x2027, 0x202F, 0x2065, 0x206A] {
      let text = String(Character(Unicode.Scalar(value)!))
      #expect(TerminalText.escape(text) == text, "U+\(String(value, radix: 16))")
    }
  }

  @Test func displayWidthCountsColumns() {
    #expect(TerminalText.displayWidth("abc") == 3)
    #expect(TerminalText.displayWidth("中文") == 4)  // East Asian wide
    #expect(TerminalText.displayWidth("ＡＢ") == 4)  // fullwidth
    #expect(TerminalText.displayWidth("😀") == 2)  // emoji presentation
    #expect(TerminalText.displayWidth("e\u{301}") == 1)  // combining mark
    #expect(TerminalText.displayWidth("👩\u{200D}💻") == 4)  // joiner: no column of its own
    #expect(TerminalText.displayWidth("한국어") == 6)
  }
}

/// The escaping works on UTF-8 bytes; here the rule is read by scalars
/// (`byScalars`, as the type's documentation states it), and `isPlain`,
/// `escape`, `appendEscaped` and `writeEscaped` (in `escapedLength`, exactly)
/// agree with it on every scalar of the first three planes' edges, alone
/// and between others, and on random text.
@Suite struct PlainTextTests {
  /// The rule, scalar by scalar.
  static func byScalars(_ text: String) -> String {
    func hex(_ value: UInt32, _ width: Int) -> String {
      let digits = String(value, radix: 16)
      return String(repeating: "0", count: max(0, width - digits.count)) + digits
    }
    var out = ""
    for scalar in text.unicodeScalars {
      let v = scalar.value
      switch v {
      case 0x5C: out += "\\\\"
      case 0x0A: out += "\\n"
      case 0x0D: out += "\\r"
      case 0x09: out += "\\t"
      case 0x00..<0x20, 0x7F: out += "\\x" + hex(v, 2)
      case 0x80...0x9F, 0x2028...0x202E, 0x2066...0x2069: out += "\\u{" + hex(v, 4) + "}"
      default: out.unicodeScalars.append(scalar)
      }
    }
    return out
  }

  static func agree(_ text: String) -> Bool {
    var copy = text
    let plain = copy.withUTF8 { TerminalText.isPlain($0) }
    var bytes: [UInt8] = []
    TerminalText.appendEscaped(text, to: &bytes)
    let expected = byScalars(text)
    let escaped = Array(expected.utf8)
    return plain == (expected == text) && TerminalText.escape(text) == expected && bytes == escaped
      && written(text) == escaped
  }

  /// A long text that needs escaping is escaped in one pass: a megabyte of
  /// controls took minutes when each scalar was appended to a `String`
  /// (this test then runs for as long; now it takes milliseconds).
  @Test func aLongTextIsEscapedInOnePass() {
    let text = String(repeating: "\u{1}a", count: 500_000)
    let escaped = TerminalText.escape(text)
    #expect(escaped.utf8.count == 2_500_000)
    #expect(escaped.hasPrefix("\\x01a\\x01a"))
  }

  /// `writeEscaped`'s bytes, into room of `escapedLength` bytes, which it
  /// must fill exactly (a guard byte after it must stay as it was).
  static func written(_ text: String) -> [UInt8]? {
    var copy = text
    return copy.withUTF8 { written($0) }
  }

  static func written(_ utf8: UnsafeBufferPointer<UInt8>) -> [UInt8]? {
    let room = TerminalText.escapedLength(utf8)
    let buffer = UnsafeMutablePointer<UInt8>.allocate(capacity: room + 1)
    defer { buffer.deallocate() }
    buffer[room] = 0xA5
    var p = buffer
    TerminalText.writeEscaped(utf8, to: &p)
    guard p - buffer == room, buffer[room] == 0xA5 else { return nil }
    return Array(UnsafeBufferPointer(start: buffer, count: room))
  }

  /// A text cut short inside a C1 control or a separator (never a record's:
  /// each is checked to be valid UTF-8) is copied as it is, no byte past
  /// its end read as part of an escape.
  @Test func aLeadByteCutShortAtTheEndIsCopied() {
    for bytes: [UInt8] in [[0xC2], [0x61, 0xC2], [0xE2], [0xE2, 0x80], [0x0A, 0xE2, 0x81]] {
      // Followed in memory by what would complete an escape.
      let padded = bytes + [0x85, 0xA8]
      let written = padded.withUnsafeBufferPointer { Self.written(UnsafeBufferPointer(rebasing: $0[..<bytes.count])) }
      let expected = bytes.first == 0x0A ? Array("\\n".utf8) + bytes.dropFirst() : bytes
      #expect(written == expected, "\(bytes)")
    }
  }

  @Test func writeEscapedNeedsAllItsRoomForTheWidestEscapes() {
    #expect(Self.written("\u{1F}") == Array("\\x1f".utf8))
    #expect(Self.written("\u{85}") == Array("\\u{0085}".utf8))
    #expect(Self.written("a\\\n\u{2066}") == Array("a\\\\\\n\\u{2066}".utf8))
  }

  @Test func isPlainAgreesWithEscapeOnEveryScalarOfTheEdges() {
    let ranges: [ClosedRange<UInt32>] = [
      0...0x800, 0x1FF0...0x2100, 0xD7F0...0xD7FF, 0xE000...0xE010, 0xFFF0...0xFFFF, 0x1_0000...0x1_0010,
      0x1_F600...0x1_F610, 0x10_FFF0...0x10_FFFF,
    ]
    var checked = 0
    for range in ranges {
      for value in range {
        guard let scalar = Unicode.Scalar(value) else { continue }
        let alone = String(Character(scalar))
        #expect(Self.agree(alone), "U+\(String(value, radix: 16))")
        #expect(Self.agree("a" + alone + "é"), "U+\(String(value, radix: 16)) between")
        checked += 1
      }
    }
    #expect(checked == 2_421)
  }

  @Test func isPlainAgreesWithEscapeOnRandomText() {
    var random = SeededGenerator(seed: 0x7E47)
    let pieces = [
      "a", "\\", "\n", "\u{7F}", "\u{85}", "\u{A0}", "é", "\u{2028}", "\u{202E}", "\u{202F}", "\u{2066}",
      "\u{2069}", "\u{206A}", "日", "😀", "\u{C2}", "\u{2080}", " ",
    ]
    for _ in 0..<5_000 {
      let text = (0..<Int.random(in: 0...6, using: &random)).map { _ in pieces.randomElement(using: &random)! }
        .joined()
      #expect(Self.agree(text), "\(Array(text.unicodeScalars))")
    }
  }
}
