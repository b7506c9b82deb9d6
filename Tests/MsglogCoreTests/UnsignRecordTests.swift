import Foundation
import Testing

@testable import MsglogCore

/// Record format 6 (the unsign event) and an edit's unsigned body (flags
/// 4): both read back as written, one encoding per event, the frame — and
/// so a replica's check of it — unchanged by unsigning, and every other
/// arrangement of those bytes refused.
@Suite struct UnsignRecordTests {
  static let id = ItemID(canonical: "3f2a1b4c-0000-4000-8000-00000000abcd")!
  static let time = Timestamp(milliseconds: 1_796_000_000_123)
  static let edit = Event(
    seq: 6, stream: "main", version: 5, time: time,
    op: .edit(id: id, text: "fixed ✓", sender: "bob", index: 2, replaces: 1, inserted: 1))
  static let unsign = Event(seq: 9, stream: "main", version: 8, time: time, op: .unsign(id: id, edit: 6))

  /// The edit as the unsign leaves it: its text, no sender, the unsign's seq.
  static var unsigned: Event {
    var event = edit
    event.op = .edit(id: id, text: "fixed ✓", sender: nil, index: 2, replaces: 1, inserted: 1)
    event.erased = unsign.seq
    return event
  }

  /// `bytes` with its checksums made right again: a framed record's body
  /// (when `frameLength` leaves one) and its frame.
  static func resealed(_ bytes: [UInt8], frameLength: Int) -> [UInt8] {
    var out = bytes
    let frame = CRC32C.checksum(Array(out[..<frameLength]))
    if out.count > frameLength + 4 {
      let body = out[frameLength..<(out.count - 8)].withUnsafeBytes { CRC32C.update(frame, $0) }
      out.replaceSubrange((out.count - 8)..<(out.count - 4), with: withUnsafeBytes(of: body.bigEndian) { Array($0) })
    }
    out.replaceSubrange((out.count - 4)..., with: withUnsafeBytes(of: frame.bigEndian) { Array($0) })
    return out
  }

  @Test func anUnsignIsFramedRecordFormatSixInEitherLayout() throws {
    for layout in [EventRecord.Layout.whole, .framed] {
      let bytes = EventRecord.encode(Self.unsign, layout: layout)
      #expect(bytes[0] == EventRecord.formatVersion6 && bytes[1] == 7)
      #expect(try EventRecord.decode(bytes) == Self.unsign)
      #expect(EventRecord.isCanonical(bytes, of: Self.unsign))
      #expect(try bytes.withUnsafeBytes { try EventRecord.positional($0) }.change == .unsign)
    }
  }

  @Test func anUnsignedEditKeepsItsTextAndItsFrame() throws {
    let signed = EventRecord.encode(Self.edit, layout: .framed)
    let bytes = EventRecord.encode(Self.unsigned, layout: .framed)
    #expect(bytes[0] == EventRecord.formatVersion4)
    #expect(try EventRecord.decode(bytes) == Self.unsigned)
    #expect(EventRecord.isCanonical(bytes, of: Self.unsigned))
    // The frame is what it was: a replica's check of its head holds.
    #expect(signed.withUnsafeBytes(EventRecord.headCheck) == bytes.withUnsafeBytes(EventRecord.headCheck))
    let text = try bytes.withUnsafeBytes { try EventRecord.textRecord($0, verifyingChecksum: true) }
    #expect(text.text == "fixed ✓")
    // The whole layout has no room for it: an unsigned edit is framed in any store.
    #expect(EventRecord.encode(Self.unsigned, layout: .whole) == bytes)
  }

  @Test func otherArrangementsAreRefused() throws {
    let unsign = EventRecord.encode(Self.unsign, layout: .framed)
    // Op 7 in format 5, op 6 in format 6.
    var moved = unsign
    moved[0] = EventRecord.formatVersion5
    #expect(throws: EventRecord.DecodeError.unknownOp(7)) {
      try EventRecord.decode(Self.resealed(moved, frameLength: moved.count - 4))
    }
    moved = unsign
    moved[1] = 6
    #expect(throws: EventRecord.DecodeError.unknownOp(6)) {
      try EventRecord.decode(Self.resealed(moved, frameLength: moved.count - 4))
    }
    // An insert's body cannot be unsigned (flags 4 is an edit's only).
    var insert = Self.edit
    insert.op = .insert(id: Self.id, index: 0, text: "fixed ✓", sender: nil)
    let plain = EventRecord.encode(insert, layout: .framed)
    let frameLength = plain.count - 4 - 4 - (1 + 4 + "fixed ✓".utf8.count)
    var flagged = Array(plain[..<frameLength]) + [EventRecord.bodyUnsigned] + withUnsafeBytes(of: UInt64(9).bigEndian) {
      Array($0)
    }
    flagged += Array(plain[(frameLength + 1)...])
    #expect(throws: EventRecord.DecodeError.invalidFlag(4)) {
      try EventRecord.decode(Self.resealed(flagged, frameLength: frameLength))
    }
    // An unsigned empty text: one encoding per event, and that one is the erased body.
    var empty = Self.unsigned
    empty.op = .edit(id: Self.id, text: "", sender: nil, index: 2, replaces: 1, inserted: 1)
    let erased = EventRecord.encode(empty, layout: .framed)
    let editFrame = erased.count - 4 - 4 - 9
    #expect(erased[editFrame] == EventRecord.bodyErased)
    flagged = Array(erased[..<editFrame]) + [EventRecord.bodyUnsigned] + Array(erased[(editFrame + 1)..<(editFrame + 9)])
      + [0, 0, 0, 0] + Array(erased[(erased.count - 8)...])
    #expect(throws: EventRecord.DecodeError.invalidFlag(4)) {
      try EventRecord.decode(Self.resealed(flagged, frameLength: editFrame))
    }
  }
}
