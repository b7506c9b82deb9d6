import MsglogCore
import Testing

/// A trimmed stream's base row (docs/FORMAT.md): as an older msglog wrote
/// it (no retired items), and with the items removed before the horizon
/// whose ids stay used; every cut or partial row is damage, never a
/// shorter base.
@Suite struct BaseRowTests {
  static let stream: StreamName = "team/board"
  static let base = StreamBase(
    stream: stream, seq: 41, version: 30,
    slots: [
      Slot(id: ItemID(canonical: "aaaaaaaa-aaaa-4aaa-8aaa-aaaaaaaaaaaa")!, seq: 7),
      Slot(id: ItemID(canonical: "bbbbbbbb-bbbb-4bbb-8bbb-bbbbbbbbbbbb")!, seq: 12),
    ])
  static let retired = [
    RetiredItem(
      stream: stream, id: ItemID(canonical: "cccccccc-cccc-4ccc-8ccc-cccccccccccc")!, insertSeq: 2, removeSeq: 9),
    RetiredItem(
      stream: stream, id: ItemID(canonical: "dddddddd-dddd-4ddd-8ddd-dddddddddddd")!, insertSeq: 3, removeSeq: 40),
  ]

  func decoded(_ row: [UInt8]) throws -> (base: StreamBase, retired: [RetiredItem]) {
    try row.withUnsafeBytes { try StreamBase.decodeBaseRow(stream: Self.stream, $0) }
  }

  @Test func aRowWithoutRetiredItemsIsTheOlderForm() throws {
    let row = Self.base.encodedAsBase()
    let read = try decoded(row)
    #expect(read.base == Self.base && read.retired.isEmpty)
    // The older form: seq, version, then the items, then the checksum.
    #expect(row.count == 8 * 2 + 24 * 2 + 4)
    #expect(Array(row.prefix(8)) == [0, 0, 0, 0, 0, 0, 0, 41])
  }

  @Test func retiredItemsRoundTrip() throws {
    let read = try decoded(Self.base.encodedAsBase(retiring: Self.retired))
    #expect(read.base == Self.base)
    #expect(read.retired == Self.retired)
    #expect(read.retired.map(\.entry) == [IdEntry(insertSeq: 2, removeSeq: 9), IdEntry(insertSeq: 3, removeSeq: 40)])
    // A base of no items that retires some.
    let empty = StreamBase(stream: Self.stream, seq: 41, version: 30, slots: [])
    let alone = try decoded(empty.encodedAsBase(retiring: Self.retired))
    #expect(alone.base == empty && alone.retired == Self.retired)
  }

  /// Resealed with a byte too few or too many, a row is damage.
  @Test func aPartialRowIsDamage() throws {
    let body = Array(Self.base.encodedAsBase(retiring: Self.retired).dropLast(4))  // the checksum
    #expect(body.count == 8 * 4 + 24 * 2 + 32 * 2)
    for cut in [Array(body.dropLast(1)), body + [0], Array(body.prefix(8 * 4 + 24 * 2 - 1)), Array(body.prefix(8 * 3))]
    {
      let row = DerivedRows.seal(.base, key: StreamBase.baseKey(Self.stream), Array(cut))
      #expect(throws: DerivedDamage.self) { try decoded(row) }
    }
  }
}
