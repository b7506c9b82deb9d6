import Foundation
import Testing

@testable import MsglogCore

/// docs/REFERENCE.md's event table, one event kind at a time, at the edge indices.
@Suite struct ProjectionTests {
  let ids = (0..<6).map { _ in ItemID() }
  let t = Timestamp(milliseconds: 0)

  func insert(_ i: Int, at index: UInt64, seq: UInt64) -> Event {
    Event(
      seq: seq, stream: "s", version: seq, time: t, op: .insert(id: ids[i], index: index, text: "t\(i)", sender: nil))
  }

  func build(_ n: Int) throws -> Projection {
    var p = Projection()
    for i in 0..<n { try p.apply(insert(i, at: UInt64(i), seq: UInt64(i + 1))) }
    return p
  }

  @Test func insertAtZeroMiddleAndCount() throws {
    var p = try build(2)  // [0, 1]
    try p.apply(insert(2, at: 0, seq: 3))  // [2, 0, 1]
    try p.apply(insert(3, at: 3, seq: 4))  // append: [2, 0, 1, 3]
    try p.apply(insert(4, at: 3, seq: 5))  // count-1: [2, 0, 1, 4, 3]
    #expect(p.ids == [ids[2], ids[0], ids[1], ids[4], ids[3]])
    #expect(p.version == 5)
  }

  @Test func insertPastCountIsCorruption() throws {
    var p = try build(2)
    #expect(throws: ReplayError.self) { try p.apply(insert(2, at: 3, seq: 3)) }
    #expect(p.count == 2)
  }

  @Test func removeChecksTheItemIsWhereItWasRecorded() throws {
    var p = try build(3)
    #expect(throws: ReplayError.self) {
      try p.apply(Event(seq: 4, stream: "s", version: 4, time: t, op: .remove(id: ids[1], index: 2)))
    }
    #expect(throws: ReplayError.self) {
      try p.apply(Event(seq: 4, stream: "s", version: 4, time: t, op: .remove(id: ids[1], index: 3)))
    }
    #expect(p.count == 3)
  }

  @Test func removeTakesTheItemOut() throws {
    var p = try build(3)
    try p.apply(Event(seq: 4, stream: "s", version: 4, time: t, op: .remove(id: ids[1], index: 1)))
    #expect(p.ids == [ids[0], ids[2]])
    try p.apply(Event(seq: 5, stream: "s", version: 5, time: t, op: .remove(id: ids[2], index: 1)))
    try p.apply(Event(seq: 6, stream: "s", version: 6, time: t, op: .remove(id: ids[0], index: 0)))
    #expect(p.ids.isEmpty)
    #expect(throws: ReplayError.self) {
      try p.apply(Event(seq: 7, stream: "s", version: 7, time: t, op: .remove(id: ids[0], index: 0)))
    }
  }

  @Test(arguments: [
    (UInt64(0), UInt64(3), [1, 2, 3, 0]),  // first to last
    (3, 0, [3, 0, 1, 2]),  // last to first
    (1, 2, [0, 2, 1, 3]),  // down by one: `to` is the final index
    (2, 1, [0, 2, 1, 3]),  // up by one
    (0, 2, [1, 2, 0, 3]),
  ])
  func moveEndsAtTheFinalIndex(from: UInt64, to: UInt64, expected: [Int]) throws {
    var p = try build(4)
    try p.apply(Event(seq: 5, stream: "s", version: 5, time: t, op: .move(id: ids[Int(from)], from: from, to: to)))
    #expect(p.ids == expected.map { ids[$0] })
  }

  @Test func moveWithTheWrongIdOrOutOfRangeIsCorruption() throws {
    var p = try build(3)
    #expect(throws: ReplayError.self) {
      try p.apply(Event(seq: 4, stream: "s", version: 4, time: t, op: .move(id: ids[1], from: 0, to: 2)))
    }
    #expect(throws: ReplayError.self) {
      try p.apply(Event(seq: 4, stream: "s", version: 4, time: t, op: .move(id: ids[0], from: 0, to: 3)))
    }
    #expect(p.ids == [ids[0], ids[1], ids[2]])
  }

  @Test func versionsMustFollowEachOther() throws {
    var p = try build(1)
    #expect(throws: ReplayError.self) { try p.apply(insert(1, at: 0, seq: 3).with(version: 3)) }
  }
}

extension Event {
  func with(version: UInt64) -> Event {
    var copy = self
    copy.version = version
    return copy
  }
}
