import Foundation
import Msglog
import MsglogTestSupport
import Testing

@testable import MsglogCore

/// `edit`, `restore`, `undo` and a rebase cost O(k + log n) for k events
/// since the version they go back to, like the other writes: on a stream of
/// 100,000 items each reads the same records as on a stream of ten, order-
/// tree nodes only along a few root-to-leaf paths, and id rows of at most a
/// leaf's worth of items. Counted in rows read (the in-memory store counts
/// them), not in time.
@Suite struct WorkingTogetherCostTests {
  /// The rows each command of a fixed script reads, on a stream of `count` items.
  static func reads(count: Int) throws -> [(String, MemoryStore.Reads)] {
    let log = EventLog.inMemory()
    let store = log.memoryStore
    let ids = (0..<count).map { n in ItemID(canonical: String(format: "00000001-0000-4000-8000-%012x", n))! }
    _ = try log.perform(ids.map { WriteRequest(stream: "big", command: .insert(InsertRequest(text: "item", id: $0))) })
    let middle = ids[count / 2]
    var out: [(String, MemoryStore.Reads)] = []
    func measure(_ name: String, _ body: () throws -> Void) throws {
      try body()
      out.append((name, store.readsOfLastWrite))
    }
    let v = UInt64(count)
    try measure("edit") { try log.edit(.id(middle), text: "edited", in: "big") }
    try measure("undo edit") { try log.undo(in: "big") }
    try measure("move") { try log.move(from: count / 2, to: 1, in: "big") }
    try measure("undo move") { try log.undo(in: "big") }
    try measure("remove") { try log.remove(id: ids[count / 3], from: "big") }
    try measure("restore") { try log.restore(.id(ids[count / 3]), in: "big") }
    try measure("undo restore") { try log.undo(in: "big") }
    try measure("undo remove by seq") { try log.undo(v + 5, in: "big") }
    try measure("redo") { try log.undo(v + 8, in: "big") }
    try measure("rebased move") { try log.move(from: 2, to: count - 1, in: "big", expectVersion: v + 2, rebase: true) }
    try measure("rebased insert") {
      try log.insert("new", at: count / 4, into: "big", expectVersion: v + 3, rebase: true)
    }
    try measure("rebased edit") { try log.edit(.id(ids[0]), text: "zero", in: "big", expectVersion: v, rebase: true) }
    #expect(try log.verify().isClean)
    return out
  }

  @Test func aHundredThousandItemsCostWhatTenDo() throws {
    let small = try Self.reads(count: 10)
    let big = try Self.reads(count: 100_000)
    for ((name, few), (_, many)) in zip(small, big) {
      #expect(many.records == few.records, "\(name): \(many.records) records read on the big stream, \(few.records) on the small")
      // A leaf that splits moves up to half its 64 items to a new leaf,
      // whose id rows then name it (as for any insert or move).
      #expect(many.ids <= few.ids + StoredOrder.leafCapacity, "\(name): \(many.ids) id rows, \(few.ids)")
      // Leaves of 64 slots and inner nodes of 64: 100,000 items are 3
      // levels, ten are 1; a command walks a few root-to-leaf paths.
      #expect(many.nodes < 40, "\(name): \(many.nodes) nodes, \(few.nodes) on the small stream")
    }
  }
}
