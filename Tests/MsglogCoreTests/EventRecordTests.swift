import Foundation
import MsglogCoreTestSupport
import Testing

@testable import MsglogCore

@Suite struct EventRecordTests {
  static let id = ItemID(canonical: "3f2a1b4c-0000-4000-8000-00000000abcd")!
  static let time = Timestamp(milliseconds: 1_796_000_000_123)

  static let samples: [Event] = [
    Event(seq: 1, stream: "main", version: 1, time: time, op: .insert(id: id, index: 0, text: "hi", sender: "ann")),
    Event(
      seq: 2, stream: "main", version: 2, time: time, op: .insert(id: id, index: 7, text: "no sender", sender: nil)),
    Event(seq: 3, stream: "main", version: 3, time: time, op: .insert(id: id, index: 1, text: "x", sender: "")),
    Event(
      seq: 4, stream: "日本語 ✓", version: 1, time: Timestamp(milliseconds: -1),
      op: .insert(id: id, index: 0, text: "héllo 👋🏽 \u{0}\n", sender: "Zoë")),
    Event(seq: 5, stream: "main", version: 4, time: time, op: .remove(id: id, index: 3)),
    Event(seq: UInt64(Int64.max), stream: "s", version: 9, time: time, op: .move(id: id, from: 3, to: 7)),
    // Working together: record format 2.
    Event(
      seq: 6, stream: "main", version: 5, time: time,
      op: .edit(id: id, text: "fixed ✓", sender: "bob", index: 2, replaces: 1, inserted: 1)),
    Event(
      seq: 7, stream: "main", version: 6, time: time,
      op: .edit(id: id, text: "back", sender: nil, index: 0, replaces: 6, inserted: 1), undoes: 6),
    Event(seq: 8, stream: "main", version: 7, time: time, op: .restore(id: id, index: 4, textSeq: 6)),
    Event(seq: 9, stream: "main", version: 8, time: time, op: .remove(id: id, index: 4), undoes: 8),
    Event(seq: 10, stream: "main", version: 9, time: time, op: .move(id: id, from: 1, to: 0), undoes: 3),
    Event(seq: 11, stream: "main", version: 10, time: time, op: .restore(id: id, index: 0, textSeq: 1), undoes: 9),
  ]

  /// Only the events of working together are written in format 2; the
  /// others stay format 1, byte for byte what msglog wrote before them.
  @Test(arguments: samples) func formatTwoOnlyWhereNeeded(_ event: Event) {
    let bytes = EventRecord.encode(event)
    let needsTwo: Bool
    switch event.op {
    case .edit, .restore: needsTwo = true
    default: needsTwo = event.undoes != nil
    }
    #expect(bytes[0] == (needsTwo ? 2 : 1))
  }

  /// Format 2 holding what format 1 holds (an insert, remove or move that
  /// undoes nothing) is refused: one event has one record.
  @Test func aNeedlessFormatTwoIsRefused() throws {
    var bytes = EventRecord.encode(Self.samples[9])
    // The same remove, its `undoes` set to 0.
    bytes.replaceSubrange((bytes.count - 12)..<(bytes.count - 4), with: [UInt8](repeating: 0, count: 8))
    bytes.replaceSubrange((bytes.count - 4)..., with: [UInt8](repeating: 0, count: 4))
    let checksum = CRC32C.checksum(Array(bytes.dropLast(4)))
    bytes.replaceSubrange((bytes.count - 4)..., with: withUnsafeBytes(of: checksum.bigEndian, Array.init))
    #expect(throws: EventRecord.DecodeError.needlessFormat) { try EventRecord.decode(bytes) }
    #expect(throws: EventRecord.DecodeError.needlessFormat) { try Self.positional(bytes, stream: "main") }
    // And an edit or a restore in format 1 is an unknown op.
    var old = EventRecord.encode(Self.samples[8])
    old[0] = 1
    old.replaceSubrange(
      (old.count - 4)..., with: withUnsafeBytes(of: CRC32C.checksum(Array(old.dropLast(4))).bigEndian, Array.init))
    #expect(throws: EventRecord.DecodeError.unknownOp(5)) { try EventRecord.decode(old) }
  }

  @Test(arguments: samples) func roundTrip(_ event: Event) throws {
    let bytes = EventRecord.encode(event)
    #expect(try EventRecord.decode(bytes) == event)
  }

  /// Replay's fast path reads the same positions as the full decoder, and
  /// skips other streams without decoding them.
  static func positional(_ bytes: [UInt8], stream: StreamName) throws -> PositionalEvent? {
    let name = stream.bytes
    let result = bytes.withUnsafeBytes { raw in
      name.withUnsafeBytes { name in
        Result { () throws(EventRecord.DecodeError) -> PositionalEvent? in
          try EventRecord.positional(raw, ifStream: name)
        }
      }
    }
    return try result.get()
  }

  @Test(arguments: samples) func positionalDecodingAgreesWithFullDecoding(_ event: Event) throws {
    let bytes = EventRecord.encode(event)
    #expect(try Self.positional(bytes, stream: event.stream) == event.positional)
    #expect(try Self.positional(bytes, stream: "other") == nil)
    var damaged = bytes
    damaged[3] ^= 0x10
    #expect(throws: EventRecord.DecodeError.self) { try Self.positional(damaged, stream: "other") }
  }

  /// A record is the stream's only when every byte of its name is the
  /// stream's: names of 1 to 20 bytes (the compare goes a word at a time,
  /// then a byte), each against a name of its length that differs in one
  /// byte, at every place, in both layouts.
  @Test func aNameDifferingInOneByteIsAnotherStream() throws {
    for length in 1...20 {
      let name = String((0..<length).map { Character(UnicodeScalar(UInt8(97 + $0 % 26))) })
      let event = Event(
        seq: 1, stream: StreamName(name), version: 1, time: Self.time, op: .remove(id: Self.id, index: 2))
      for layout in [EventRecord.Layout.whole, .framed] {
        let bytes = EventRecord.encode(event, layout: layout)
        #expect(try Self.positional(bytes, stream: event.stream) == event.positional)
        for place in 0..<length {
          var other = Array(name.utf8)
          other[place] = UInt8(ascii: "Z")
          #expect(try Self.positional(bytes, stream: StreamName(String(decoding: other, as: UTF8.self))) == nil)
        }
      }
    }
  }

  @Test func oneMebibyteOfTextRoundTrips() throws {
    let text = String(repeating: "é", count: Limits.maxTextBytes / 2)
    let event = Event(
      seq: 1, stream: "main", version: 1, time: Self.time, op: .insert(id: Self.id, index: 0, text: text, sender: nil))
    #expect(try EventRecord.decode(EventRecord.encode(event)) == event)
  }

  /// Every single-bit flip anywhere in a record is caught (CRC-32C detects
  /// all single-bit errors).
  @Test(arguments: samples) func everyFlippedBitIsDetected(_ event: Event) {
    let bytes = EventRecord.encode(event)
    for bit in 0..<(bytes.count * 8) {
      var damaged = bytes
      damaged[bit / 8] ^= UInt8(1 << (bit % 8))
      #expect(throws: EventRecord.DecodeError.self, "bit \(bit)") { try EventRecord.decode(damaged) }
    }
  }

  @Test func truncatedAndExtendedRecordsAreRefused() {
    let bytes = EventRecord.encode(Self.samples[0])
    for length in 0..<bytes.count {
      #expect(throws: EventRecord.DecodeError.self) { try EventRecord.decode(Array(bytes[0..<length])) }
    }
    #expect(throws: EventRecord.DecodeError.self) { try EventRecord.decode(bytes + [0]) }
  }

  /// The layout is a published format (docs/FORMAT.md): pin it byte for byte.
  @Test func layoutIsStable() {
    let event = Event(
      seq: 1, stream: "m", version: 2, time: Timestamp(milliseconds: 3), op: .move(id: Self.id, from: 4, to: 5))
    let hex = EventRecord.encode(event).map { String(format: "%02x", $0) }.joined()
    #expect(
      hex == "0103" + "0000000000000001" + "0000000000000002" + "0000000000000003"
        + "3f2a1b4c000040008000" + "00000000abcd" + "0001" + "6d" + "0000000000000004" + "0000000000000005"
        + String(format: "%08x", CRC32C.checksum(Array(EventRecord.encode(event).dropLast(4)))))
    let edit = Event(
      seq: 6, stream: "m", version: 7, time: Timestamp(milliseconds: 8),
      op: .edit(id: Self.id, text: "t", sender: "s", index: 1, replaces: 2, inserted: 3), undoes: 4)
    let editHex = EventRecord.encode(edit).map { String(format: "%02x", $0) }.joined()
    #expect(
      editHex == "0204" + "0000000000000006" + "0000000000000007" + "0000000000000008"
        + "3f2a1b4c000040008000" + "00000000abcd" + "0001" + "6d" + "0000000000000001" + "0000000000000002"
        + "0000000000000003" + "01" + "00000001" + "73" + "00000001" + "74" + "0000000000000004"
        + String(format: "%08x", CRC32C.checksum(Array(EventRecord.encode(edit).dropLast(4)))))
    let restore = Event(
      seq: 6, stream: "m", version: 7, time: Timestamp(milliseconds: 8), op: .restore(id: Self.id, index: 1, textSeq: 2)
    )
    let restoreHex = EventRecord.encode(restore).map { String(format: "%02x", $0) }.joined()
    #expect(
      restoreHex == "0205" + "0000000000000006" + "0000000000000007" + "0000000000000008"
        + "3f2a1b4c000040008000" + "00000000abcd" + "0001" + "6d" + "0000000000000001" + "0000000000000002"
        + "0000000000000000"
        + String(format: "%08x", CRC32C.checksum(Array(EventRecord.encode(restore).dropLast(4)))))
  }

  @Test func crc32cMatchesTheStandardCheckValue() {
    // The check value of CRC-32C for "123456789" (RFC 3720, appendix B.4).
    #expect(CRC32C.checksum(Array("123456789".utf8)) == 0xE306_9283)
    #expect(CRC32C.checksum([UInt8](repeating: 0, count: 32)) == 0x8A91_36AA)
    let check = Array("123456789".utf8)
    #expect(check.withUnsafeBytes { CRC32C.tableUpdate(0, $0) } == 0xE306_9283)
  }

  /// The instruction is used wherever the CPU has it (asked of glibc, which
  /// asked the CPU at start): `/proc/cpuinfo` says whether it does.
  @Test func theInstructionIsUsedWhereTheCPUHasIt() throws {
    #if arch(x86_64) && os(Linux)
      let cpuinfo = try String(contentsOfFile: "/proc/cpuinfo", encoding: .utf8)
      let flags = cpuinfo.split(separator: "\n").first { $0.hasPrefix("flags") } ?? ""
      #expect(CRC32C.usesHardware == flags.split(separator: " ").contains("sse4_2"))
    #endif
  }

  /// The instruction and the tables agree on every length and alignment,
  /// and a checksum continued in pieces equals one over the whole.
  @Test func hardwareAndTableChecksumsAgree() {
    var random = SeededGenerator(seed: 0xC3C)
    let bytes = (0..<4_096).map { _ in UInt8.random(in: 0...255, using: &random) }
    bytes.withUnsafeBytes { all in
      for _ in 0..<2_000 {
        let start = Int.random(in: 0..<64, using: &random)
        let end = Int.random(in: start...min(all.count, start + 300), using: &random)
        let piece = UnsafeRawBufferPointer(rebasing: all[start..<end])
        let table = CRC32C.tableUpdate(0, piece)
        #expect(CRC32C.update(0, piece) == table)
        let cut = Int.random(in: start...end, using: &random)
        let split = CRC32C.update(
          CRC32C.tableUpdate(0, UnsafeRawBufferPointer(rebasing: all[start..<cut])),
          UnsafeRawBufferPointer(rebasing: all[cut..<end]))
        #expect(split == table)
      }
    }
  }
}

@Suite struct TimestampTests {
  @Test(arguments: [
    (Int64(0), "1970-01-01T00:00:00.000Z"),
    (1_796_000_000_123, "2026-11-30T00:53:20.123Z"),
    (951_782_400_000, "2000-02-29T00:00:00.000Z"),
    (-1, "1969-12-31T23:59:59.999Z"),
  ])
  func formatsAndParses(ms: Int64, text: String) {
    #expect(Timestamp(milliseconds: ms).rfc3339 == text)
    #expect(Timestamp(rfc3339: text)?.milliseconds == ms)
  }

  /// Every field in its place across the four-digit years (formatted on
  /// the stack, at once): what is printed parses back to the same instant,
  /// and has the layout `YYYY-MM-DDTHH:MM:SS.mmmZ`.
  @Test func formatsRandomInstantsThatParseBack() throws {
    var random = SeededGenerator(seed: 0x3339)
    // 0000-01-01 to 9999-12-31, in milliseconds since the epoch.
    let range: ClosedRange<Int64> = -62_167_219_200_000...253_402_300_799_999
    for _ in 0..<20_000 {
      let ms = Int64.random(in: range, using: &random)
      let text = Timestamp(milliseconds: ms).rfc3339
      #expect(Timestamp(rfc3339: text)?.milliseconds == ms, "\(ms) \(text)")
      let layout = text.map { $0.isNumber ? "9" : String($0) }.joined()
      #expect(layout == "9999-99-99T99:99:99.999Z", "\(text)")
    }
    // Outside the four-digit years: the year as it is.
    #expect(Timestamp(milliseconds: 253_402_300_800_000).rfc3339 == "10000-01-01T00:00:00.000Z")
  }

  /// Writing through a document's day gives what writing each instant on
  /// its own gives, and what parses back to it: runs of one day, the next
  /// day, a day seen before, the days around the epoch, and years outside
  /// 0…9999 (nothing written, and the day kept as it was: two on one day,
  /// and the kept day used straight after one).
  @Test func writingThroughADayIsWritingEachOnItsOwn() {
    var random = SeededGenerator(seed: 0x3340)
    let day: Int64 = 86_400_000
    let range: ClosedRange<Int64> = -62_167_219_200_000...253_402_300_799_999
    var instants: [Int64] = [
      0, -1, day - 1, day, -day, range.lowerBound - 1, range.lowerBound - 2, 0, range.upperBound + 1, 1,
      range.upperBound,
    ]
    for _ in 0..<5_000 {
      let base = Int64.random(in: range, using: &random)
      // A run of instants around one day, and now and then one seen before.
      for _ in 0..<Int.random(in: 1...6, using: &random) {
        let near = base + Int64.random(in: -day...day, using: &random)
        instants.append(min(range.upperBound, max(range.lowerBound, near)))
      }
      if Bool.random(using: &random) { instants.append(instants[Int.random(in: 0..<instants.count, using: &random)]) }
    }
    var kept = Timestamp.RFC3339Day()
    for ms in instants {
      let time = Timestamp(milliseconds: ms)
      var alone = [UInt8](repeating: 0, count: 24)
      var through = [UInt8](repeating: 0, count: 24)
      let (wroteAlone, movedAlone) = alone.withUnsafeMutableBufferPointer { b in
        var p = b.baseAddress!
        return (time.writeRFC3339(at: &p), p - b.baseAddress!)
      }
      let (wroteThrough, movedThrough) = through.withUnsafeMutableBufferPointer { b in
        var p = b.baseAddress!
        return (time.writeRFC3339(at: &p, day: &kept), p - b.baseAddress!)
      }
      #expect(wroteAlone == wroteThrough && movedAlone == movedThrough, "\(ms)")
      #expect(wroteAlone == range.contains(ms), "\(ms)")
      #expect(alone == through, "\(ms)")
      if wroteThrough {
        #expect(Timestamp(rfc3339: String(decoding: through, as: UTF8.self))?.milliseconds == ms, "\(ms)")
      }
    }
  }

  /// The form msglog writes has a quick path of its own: it reads what
  /// the general path reads (the same instant written with a lowercase `t`
  /// and `z`, or with a `+00:00` offset, goes the general way), and
  /// refuses every field out of range and every byte out of place.
  @Test func theWrittenFormReadsAsTheGeneralPathReadsIt() {
    var random = SeededGenerator(seed: 0x3341)
    let range: ClosedRange<Int64> = -62_167_219_200_000...253_402_300_799_999
    for _ in 0..<5_000 {
      let ms = Int64.random(in: range, using: &random)
      let text = Timestamp(milliseconds: ms).rfc3339
      let lower = text.replacingOccurrences(of: "T", with: "t").replacingOccurrences(of: "Z", with: "z")
      let offset = String(text.dropLast()) + "+00:00"
      #expect(Timestamp(rfc3339: text)?.milliseconds == ms, "\(text)")
      #expect(Timestamp(rfc3339: lower)?.milliseconds == ms, "\(lower)")
      #expect(Timestamp(rfc3339: offset)?.milliseconds == ms, "\(offset)")
      // Any one byte made something else: refused, but for a digit made another digit.
      var bytes = Array(text.utf8)
      let k = Int.random(in: 0..<bytes.count, using: &random)
      bytes[k] = UInt8(ascii: "/")
      #expect(Timestamp(rfc3339: String(decoding: bytes, as: UTF8.self)) == nil, "\(k) of \(text)")
    }
    // A leap second reads as the second before it, both ways.
    #expect(Timestamp(rfc3339: "2016-12-31T23:59:60.500Z")?.rfc3339 == "2016-12-31T23:59:59.500Z")
    #expect(Timestamp(rfc3339: "2016-12-31T23:59:60.5Z")?.rfc3339 == "2016-12-31T23:59:59.500Z")
    #expect(Timestamp(rfc3339: "2024-02-29T00:00:00.000Z")?.rfc3339 == "2024-02-29T00:00:00.000Z")
    for wrong in [
      "2025-02-29T00:00:00.000Z", "2026-00-10T00:00:00.000Z", "2026-13-10T00:00:00.000Z", "2026-04-31T00:00:00.000Z",
      "2026-04-00T00:00:00.000Z", "2026-04-10T24:00:00.000Z", "2026-04-10T00:60:00.000Z", "2026-04-10T00:00:61.000Z",
      "2026-04-10T00:00:00.000+", "2026-04-10T00:00:00,000Z", "2026-04-10 00:00:00.000Z", "2026-04-1000:00:00.000ZZ",
    ] {
      #expect(Timestamp(rfc3339: wrong) == nil, "\(wrong)")
    }
  }

  @Test func parsesOffsetsAndFractions() {
    #expect(Timestamp(rfc3339: "2026-11-29T11:00:00+01:00")?.rfc3339 == "2026-11-29T10:00:00.000Z")
    #expect(Timestamp(rfc3339: "2026-11-29T10:00:00.1234567Z")?.rfc3339 == "2026-11-29T10:00:00.123Z")
    #expect(Timestamp(rfc3339: "2026-11-29T10:00:00.5Z")?.rfc3339 == "2026-11-29T10:00:00.500Z")
  }

  @Test(arguments: [
    "", "2026-11-29", "2026-13-01T00:00:00Z", "2026-02-30T00:00:00Z", "2026-11-29T10:00:00", "2026-11-29T10:00:00.Z",
    "2026-11-29T10:00:00Zjunk", "2026-11-29 10:00:00Z",
  ])
  func refusesMalformed(_ text: String) {
    #expect(Timestamp(rfc3339: text) == nil)
  }
}
