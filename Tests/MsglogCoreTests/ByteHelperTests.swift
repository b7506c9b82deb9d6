import Foundation
import MsglogCoreTestSupport
import Testing

@testable import MsglogCore

/// The byte helpers every codec shares: one hex table, one big-endian
/// reader and writer, ids as bytes and text, decimal and UTF-8 at the edges.
@Suite struct ByteHelperTests {
  @Test func hexDigitsAndValuesAgree() {
    for value in UInt8(0)..<16 {
      let digit = Hex.digit(value)
      #expect(Hex.value(of: digit) == value)
      #expect(String(UnicodeScalar(digit)) == String(value, radix: 16))
      // The upper case reads too.
      #expect(Hex.value(of: UInt8(ascii: Character(String(value, radix: 16).uppercased()).unicodeScalars.first!)) == value)
    }
    for byte in [UInt8(ascii: "g"), UInt8(ascii: "G"), UInt8(ascii: "-"), UInt8(ascii: " "), 0x2F, 0x3A, 0x40, 0x60] {
      #expect(Hex.value(of: byte) == nil, "\(byte)")
    }
  }

  @Test(arguments: [
    (UInt32(0), 2, "00"), (0x7F, 2, "7f"), (0x1F, 4, "001f"), (0x202A, 4, "202a"), (0x1F600, 4, "1f600"),
    (0xE306_9283, 8, "e3069283"), (0x0000_00AB, 8, "000000ab"), (UInt32.max, 1, "ffffffff"),
  ])
  func hexTextIsPaddedToItsWidth(_ value: UInt32, _ width: Int, _ text: String) {
    #expect(Hex.text(value, width: width) == text)
  }

  @Test func hexBytesOfAnIdPrefix() {
    #expect(Hex.bytes(Array("3f2a1b4c".utf8)) == [0x3F, 0x2A, 0x1B, 0x4C])
    // An odd last digit is the high half of the smallest byte it starts.
    #expect(Hex.bytes(Array("3f2a1b4c0".utf8)) == [0x3F, 0x2A, 0x1B, 0x4C, 0x00])
    #expect(Hex.bytes(Array("ABC".utf8)) == [0xAB, 0xC0])
    #expect(Hex.bytes([]) == [])
    #expect(Hex.bytes(Array("3f2z".utf8)) == nil)
  }

  @Test func bigEndianRoundTripsAtAnyOffset() {
    var bytes: [UInt8] = [0xEE]  // an odd offset for what follows
    bytes.appendBigEndian(UInt64(0x0102_0304_0506_0708))
    bytes.appendBigEndian(UInt16(0xA1B2))
    bytes.appendBigEndian(Int32(-2))
    bytes.appendBigEndian(UInt32(0xDEAD_BEEF))
    #expect(
      bytes == [
        0xEE, 1, 2, 3, 4, 5, 6, 7, 8, 0xA1, 0xB2, 0xFF, 0xFF, 0xFF, 0xFE, 0xDE, 0xAD, 0xBE, 0xEF,
      ])
    bytes.withUnsafeBytes { raw in
      #expect(raw.loadBigEndian(fromByteOffset: 1, as: UInt64.self) == 0x0102_0304_0506_0708)
      #expect(raw.loadBigEndian(fromByteOffset: 9, as: UInt16.self) == 0xA1B2)
      #expect(raw.loadBigEndian(fromByteOffset: 11, as: Int32.self) == -2)
      #expect(raw.loadBigEndian(fromByteOffset: 15, as: UInt32.self) == 0xDEAD_BEEF)
      #expect(raw.loadBigEndian(as: UInt8.self) == 0xEE)
    }
  }

  @Test func anIdIsItsBytesInOrder() throws {
    let text = "00112233-4455-6677-8899-aabbccddeeff"
    let id = try #require(ItemID(canonical: text.uppercased()))
    #expect(id.bytes == [0x00, 0x11, 0x22, 0x33, 0x44, 0x55, 0x66, 0x77, 0x88, 0x99, 0xAA, 0xBB, 0xCC, 0xDD, 0xEE, 0xFF])
    #expect(id.text == text)
    #expect(id.short == "00112233")
    #expect(id.bytes.withUnsafeBytes { ItemID(bytes: $0) } == id)
    var short: [UInt8] = [0x2A]
    id.appendShort(to: &short)
    #expect(short == [0x2A] + Array("00112233".utf8))
    #expect(written(id) == text)
    for bad in [
      "00112233-4455-6677-8899-aabbccddeef", "00112233-4455-6677-8899-aabbccddeeffa", "00112233x4455-6677-8899-aabbccddeeff",
      "0011223g-4455-6677-8899-aabbccddeeff", "",
    ] {
      #expect(ItemID(canonical: bad) == nil, "\(bad)")
    }
  }

  /// `writeText`'s 36 bytes (unrolled, as `--json` writes them).
  func written(_ id: ItemID) -> String {
    String(unsafeUninitializedCapacity: 36) { buffer in
      id.writeText(into: buffer.baseAddress!)
      return 36
    }
  }

  /// `writeText` writes `text` and `writeShort` `short` (a loop over the
  /// bytes) for every byte value at every place.
  @Test func writeTextIsTheTextForEveryByteAtEveryPlace() {
    for place in 0..<16 {
      for value in UInt8.min...UInt8.max {
        var bytes = [UInt8](repeating: UInt8(place * 17 & 0xFF), count: 16)
        bytes[place] = value
        let id = bytes.withUnsafeBytes { ItemID(bytes: $0) }
        #expect(written(id) == id.text, "\(value) at \(place)")
        let short = String(unsafeUninitializedCapacity: 8) { buffer in
          id.writeShort(into: buffer.baseAddress!)
          return 8
        }
        #expect(short == id.short, "\(value) at \(place)")
      }
    }
  }

  /// Every byte value at every digit of both text forms, and at each dash:
  /// an id parses exactly when each digit is a hex digit of either case
  /// and each dash a dash, to the bytes the digits say.
  @Test func everyByteAtEveryPlaceOfAnIdsText() throws {
    let canonical = Array("0f1e2d3c-4b5a-6978-8796-a5b4c3d2e1f0".utf8)
    let expected: [UInt8] = [0x0F, 0x1E, 0x2D, 0x3C, 0x4B, 0x5A, 0x69, 0x78, 0x87, 0x96, 0xA5, 0xB4, 0xC3, 0xD2, 0xE1, 0xF0]
    func hexValue(_ c: UInt8) -> UInt8? {
      switch c {
      case UInt8(ascii: "0")...UInt8(ascii: "9"): c - UInt8(ascii: "0")
      case UInt8(ascii: "a")...UInt8(ascii: "f"): c - UInt8(ascii: "a") + 10
      case UInt8(ascii: "A")...UInt8(ascii: "F"): c - UInt8(ascii: "A") + 10
      default: nil
      }
    }
    for text in [canonical, canonical.filter { $0 != UInt8(ascii: "-") }] {
      #expect(text.withUnsafeBytes { ItemID(canonicalUTF8: $0) }?.bytes == expected)
      var digit = 0
      for place in text.indices {
        let isDash = text[place] == UInt8(ascii: "-")
        for byte in UInt8.min...UInt8.max {
          var changed = text
          changed[place] = byte
          let id = changed.withUnsafeBytes { ItemID(canonicalUTF8: $0) }
          if isDash {
            #expect((id != nil) == (byte == UInt8(ascii: "-")), "\(byte) for a dash at \(place)")
            continue
          }
          guard let value = hexValue(byte) else {
            #expect(id == nil, "\(byte) at \(place)")
            continue
          }
          var bytes = expected
          bytes[digit / 2] = digit % 2 == 0 ? value << 4 | bytes[digit / 2] & 0x0F : bytes[digit / 2] & 0xF0 | value
          #expect(id?.bytes == bytes, "\(byte) at \(place)")
        }
        if !isDash { digit += 1 }
      }
    }
  }

  /// The id index keeps ids in byte order; `precedesInStorageOrder` must be it.
  @Test func storageOrderIsByteOrder() {
    var rng = SeededGenerator(seed: 16)
    let ids = (0..<500).map { i -> ItemID in
      // Ids that share leading bytes, so that later bytes decide.
      var bytes = (0..<16).map { _ in UInt8.random(in: 0...255, using: &rng) }
      if i % 2 == 0 { bytes.replaceSubrange(0..<(i % 15), with: repeatElement(0x42, count: i % 15)) }
      return bytes.withUnsafeBytes { ItemID(bytes: $0) }
    }
    let bySwift = ids.sorted { $0.bytes.lexicographicallyPrecedes($1.bytes) }
    #expect(ids.sorted(by: ItemID.precedesInStorageOrder) == bySwift)
    #expect(ids.sorted(by: ItemID.precedesInStorageOrder).map(\.text) == ids.map(\.text).sorted())
  }

  @Test func randomIdsAreVersionFourOfTheRFCVariant() {
    var seen: Set<ItemID> = []
    for _ in 0..<1000 {
      let id = ItemID.random()
      let text = Array(id.text)
      #expect(text[14] == "4", "\(id)")
      #expect("89ab".contains(text[19]), "\(id)")
      seen.insert(id)
    }
    #expect(seen.count == 1000)
  }

  /// A record whose checksum holds but whose text is not UTF-8 (written by
  /// anything but msglog) is refused, naming the field.
  @Test func aRecordWithInvalidUTF8IsRefused() throws {
    let event = Event(
      seq: 1, stream: "main", version: 1, time: Timestamp(milliseconds: 5),
      op: .insert(id: ItemID(), index: 0, text: "abc", sender: "ann"))
    for (field, bad) in [("text", [UInt8(0x61), 0xFF, 0x63]), ("sender", [0x61, 0xC3, 0x28])] {
      var record = EventRecord.encode(event)
      let text = Array((field == "text" ? "abc" : "ann").utf8)
      let at = try #require(
        (0...(record.count - 3)).last { Array(record[$0..<($0 + 3)]) == text })
      record.replaceSubrange(at..<(at + 3), with: bad)
      record.removeLast(4)
      record.appendBigEndian(CRC32C.checksum(record))
      #expect(throws: EventRecord.DecodeError.invalidUTF8(field: field)) { try EventRecord.decode(record) }
    }
  }
}
