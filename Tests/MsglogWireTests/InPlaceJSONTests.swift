import Msglog
import MsglogTestSupport
import MsglogWire
import Testing

@testable import MsglogCore

/// What `list --json` writes in place (`JSONWriter+InPlace.swift`, the
/// item writer) is byte for byte what the writer's appending methods
/// write, within the room each says it needs.
@Suite struct InPlaceJSONTests {
  /// `body`'s bytes, written into `room` bytes (a guard byte after it must
  /// stay as it was), and filling it when `exactly`.
  static func written(
    room: Int, exactly: Bool = false, _ body: (inout UnsafeMutablePointer<UInt8>) -> Void
  ) -> [UInt8]? {
    let buffer = UnsafeMutablePointer<UInt8>.allocate(capacity: room + 1)
    defer { buffer.deallocate() }
    buffer[room] = 0xA5
    var p = buffer
    body(&p)
    guard p - buffer <= room, !exactly || p - buffer == room, buffer[room] == 0xA5 else { return nil }
    return Array(UnsafeBufferPointer(start: buffer, count: p - buffer))
  }

  /// `copy` of every length a key, a short text or a long one has: the
  /// bytes themselves, at any alignment, and not one byte outside them
  /// (its short copies are two words that overlap).
  @Test func copiesExactlyItsBytes() {
    let source = (0..<64).map { UInt8(truncatingIfNeeded: $0 &* 37 &+ 11) }
    for count in 0...40 {
      for offset in 0..<8 {
        var target = [UInt8](repeating: 0xA5, count: 64)
        let moved = source.withUnsafeBufferPointer { from in
          target.withUnsafeMutableBufferPointer { to in
            var p = to.baseAddress! + 8 + offset
            JSONWriter.copy(from.baseAddress! + offset, count: count, to: &p)
            return p - (to.baseAddress! + 8 + offset)
          }
        }
        var expected = [UInt8](repeating: 0xA5, count: 64)
        expected.replaceSubrange((8 + offset)..<(8 + offset + count), with: source[offset..<(offset + count)])
        #expect(moved == count && target == expected, "count \(count), offset \(offset)")
      }
    }
  }

  @Test(arguments: [UInt64(0), 7, 9, 10, 99, 100, 999, 1_000, 1_000_000, 12_345_678_901, UInt64(Int64.max), UInt64.max])
  func decimals(_ value: UInt64) {
    #expect(Self.written(room: 20) { JSONWriter.write(decimal: value, to: &$0) } == Array(String(value).utf8))
  }

  /// JSON's escaping read byte by byte: a quote, a backslash and the
  /// controls with a short form get it, any other control `\u00hh`.
  static func byRule(_ text: [UInt8]) -> [UInt8] {
    var out: [UInt8] = []
    for b in text {
      switch b {
      case 0x22: out += Array(#"\""#.utf8)
      case 0x5C: out += Array(#"\\"#.utf8)
      case 0x0A: out += Array(#"\n"#.utf8)
      case 0x0D: out += Array(#"\r"#.utf8)
      case 0x09: out += Array(#"\t"#.utf8)
      case 0x08: out += Array(#"\b"#.utf8)
      case 0x0C: out += Array(#"\f"#.utf8)
      case 0x00..<0x20: out += Array((#"\u00"# + (b < 0x10 ? "0" : "") + String(b, radix: 16)).utf8)
      default: out.append(b)
      }
    }
    return out
  }

  /// Every byte below 0x80 alone, between others and six times over (the
  /// widest a text gets), and random text with multibyte scalars: written
  /// in place and appended, both as the rule says.
  @Test func escapedTextIsTheWritersEscaping() {
    var texts: [[UInt8]] = (0..<0x80).flatMap { b -> [[UInt8]] in
      let b = UInt8(b)
      return [[b], Array("a".utf8) + [b] + Array("é".utf8), [UInt8](repeating: b, count: 6)]
    }
    var random = SeededGenerator(seed: 0x150E)
    let pieces = ["a", "\"", "\\", "\n", "\u{1}", "\u{1F}", "é", "\u{2028}", "日", "👋🏽", "\t", "/"]
    for _ in 0..<2_000 {
      let text = (0..<Int.random(in: 0...8, using: &random)).map { _ in pieces.randomElement(using: &random)! }
      texts.append(Array(text.joined().utf8))
    }
    for text in texts {
      var appended: [UInt8] = []
      text.withUnsafeBufferPointer { JSONWriter.appendEscaped($0, to: &appended) }
      let inPlace = text.withUnsafeBufferPointer { utf8 in
        Self.written(room: JSONWriter.escapedLength(utf8), exactly: true) { JSONWriter.write(escaped: utf8, to: &$0) }
      }
      #expect(inPlace == Self.byRule(text), "\(text)")
      #expect(appended == Self.byRule(text), "\(text)")
    }
  }

  /// Times of every shape of year: four digits, the edges of them, and
  /// years before 0 and after 9999 (their own length).
  @Test(arguments: [
    Int64(0), 1_733_000_000_123, -1, -62_167_219_200_000, -62_167_219_200_001, 253_402_300_799_999,
    253_402_300_800_000, Int64.max, Int64.min,
  ])
  func quotedTimes(_ milliseconds: Int64) {
    let time = Timestamp(milliseconds: milliseconds)
    var json = JSONWriter()
    json.value(time)
    #expect(
      Self.written(room: JSONWriter.quotedTimeCapacity) { JSONWriter.write(quoted: time, to: &$0) } == json.bytes)
  }

  /// An item lent as bytes is written in place as the same item as a
  /// value, within `capacity(of:)`: with every optional member, a text
  /// that needs escaping, and the widest item of all (every member, every
  /// number its longest, the text empty), which `capacity(of:)`'s room for
  /// keys and numbers must hold by itself. The items share one document's
  /// kept day, as `list --json`'s do: one reuses it, one comes straight
  /// after the widest's years, which it cannot take.
  @Test func anItemIsTheSameWrittenInPlace() throws {
    let id = try #require(ItemID(canonical: "0f1e2d3c-4b5a-6978-8796-a5b4c3d2e1f0"))
    var widest = Item(
      id: id, text: "", sender: "\u{1}", time: Timestamp(milliseconds: Int64.min), seq: UInt64.max,
      edited: Timestamp(milliseconds: Int64.min), pending: true)
    widest.erased = UInt64.max
    var erased = Item(id: id, text: "", sender: "", time: Timestamp(milliseconds: 0), seq: 0)
    erased.erased = 12
    let items: [(Item, Int)] = [
      (Item(id: id, text: "hi", sender: nil, time: Timestamp(milliseconds: 1_733_000_000_123), seq: 3), 0),
      (
        Item(
          id: id, text: "q\"\\\n\u{1}é👋🏽", sender: "ann \"x\"", time: Timestamp(milliseconds: -1), seq: UInt64.max,
          edited: Timestamp(milliseconds: Int64.max), pending: true), 1
      ),
      (erased, 2),
      (
        Item(
          id: id, text: String(repeating: "\u{1F}", count: 300), sender: nil, time: Timestamp(milliseconds: 5), seq: 9),
        3
      ),
      (widest, Int.max),
      // Day 0 again, straight after a year the kept day could not take.
      (Item(id: id, text: "again", sender: nil, time: Timestamp(milliseconds: 7), seq: 10), 4),
    ]
    // One document's day across the items, as `list --json` keeps it.
    var day = Timestamp.RFC3339Day()
    for (item, index) in items {
      let inPlace = ItemBytes.lending(item) { bytes in
        Self.written(room: JSONWriter.capacity(of: bytes)) {
          $0 += JSONWriter.write(bytes, index: index, at: $0, day: &day)
        }
      }
      var value = JSONWriter()
      value.item(item, index: index)
      #expect(inPlace == value.bytes, "\(value.text)")
    }
  }
}
