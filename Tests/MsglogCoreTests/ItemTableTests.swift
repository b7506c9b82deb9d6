import MsglogCoreTestSupport
import Testing

@testable import MsglogCore

/// `ItemTable.insertsInIDOrder`, a radix sort of the ids' first eight
/// bytes with ties put in order by the rest: the seqs of the inserts in
/// the order their ids sort bytewise, as a comparison of whole ids gives.
@Suite struct ItemTableTests {
  @Test(arguments: [0, 1, 2, 3, 255, 256, 257, 5_000])
  func insertsComeInIDOrder(count: Int) {
    var random = SeededGenerator(seed: UInt64(count) &+ 0x1D)
    let table = ItemTable(firstSeq: 100, capacity: 2 * count + 10)
    var inserted: [(id: ItemID, seq: UInt64)] = []
    for k in 0..<count {
      var bytes = (0..<16).map { _ in UInt8.random(in: 0...255, using: &random) }
      // Some ids share their first eight bytes, or all but their last, or
      // differ only in a byte of the first eight (every pass's byte).
      if k % 7 == 1, let last = inserted.last {
        last.id.withUnsafeBytes { bytes.replaceSubrange(0..<8, with: $0[0..<8]) }
      }
      if k % 11 == 2, let last = inserted.last {
        last.id.withUnsafeBytes { bytes.replaceSubrange(0..<15, with: $0[0..<15]) }
      }
      if k % 13 == 3, let last = inserted.last {
        last.id.withUnsafeBytes { bytes.replaceSubrange(0..<16, with: $0[0..<16]) }
        // Up or down, so that an insert's place does not happen to give the order.
        let place = Int.random(in: 0..<8, using: &random)
        if Bool.random(using: &random) { bytes[place] &+= 1 } else { bytes[place] &-= 1 }
      }
      let id = bytes.withUnsafeBytes { ItemID(bytes: $0) }
      guard !inserted.contains(where: { $0.id == id }) else { continue }
      // Not every event is an insert: every third seq is left out.
      let seq = UInt64(100 + k + k / 2)
      table.setInserted(id, into: k % 3, at: seq)
      inserted.append((id, seq))
    }
    let expected = inserted.sorted { $0.id.bytes.lexicographicallyPrecedes($1.id.bytes) }.map(\.seq)
    #expect(table.insertsInIDOrder() == expected)
  }
}
