import Foundation
import Msglog
import MsglogTestSupport
import Testing

@testable import MsglogCore

/// The ledger's refusals, each leaving the log as it was.
@Suite struct LedgerTests {
  let log = EventLog.inMemory()

  @discardableResult
  func perform(_ command: WriteRequest.Command, stream: StreamName = "main", expect version: UInt64? = nil) throws -> Outcome? {
    try log.perform([WriteRequest(stream: stream, command: command)], expectVersion: version)[0]
  }

  func append(_ text: String, id: ItemID? = nil, stream: StreamName = "main") throws -> ItemID {
    try perform(.insert(InsertRequest(text: text, id: id)), stream: stream)!.event.id
  }

  var export: [String] { get throws { try log.exportLines() } }

  func expectRefusal(
    _ category: MsglogError.Category, containing fragment: String, _ command: WriteRequest.Command, stream: StreamName = "main",
    expect version: UInt64? = nil
  ) throws {
    let before = try export
    do {
      try perform(command, stream: stream, expect: version)
      Issue.record("\(command) was accepted")
    } catch let error as MsglogError {
      #expect(error.category == category)
      #expect(error.description.contains(fragment), "\(error)")
    }
    #expect(try export == before)
  }

  @Test func refusesOutOfRangeIndices() throws {
    _ = try append("a")
    try expectRefusal(.refused, containing: "index 2 is out of range", .insert(InsertRequest(index: 2, text: "x")))
    try expectRefusal(.refused, containing: "from index 1 is out of range", .move(from: 1, to: 0, id: nil))
    try expectRefusal(.refused, containing: "to index 5 is out of range", .move(from: 0, to: 5, id: nil))
    try expectRefusal(.refused, containing: "it has no items", .move(from: 0, to: 0, id: nil), stream: "empty")
  }

  @Test func anIdIsInsertedAtMostOnceEver() throws {
    let id = try append("a")
    try expectRefusal(.refused, containing: "already used", .insert(InsertRequest(text: "again", id: id)))
    try perform(.remove(.id(id)))
    try expectRefusal(
      .refused, containing: "already used", .insert(InsertRequest(text: "again", id: id)), stream: "other")
    try expectRefusal(.refused, containing: "already removed", .remove(.id(id)))
  }

  @Test func removeNamesWhyAnIdIsNotLive() throws {
    let elsewhere = try append("b", stream: "other")
    try expectRefusal(.notFound, containing: "is in stream 'other'", .remove(.id(elsewhere)))
    try expectRefusal(.notFound, containing: "no item with id", .remove(.id(ItemID())))
  }

  @Test func prefixesMustMatchExactlyOneLiveItem() throws {
    let a = try append("a", id: ItemID(canonical: "aaaaaaaa-1111-4000-8000-000000000001")!)
    _ = try append("b", id: ItemID(canonical: "aaaaaaaa-2222-4000-8000-000000000002")!)
    try expectRefusal(.refused, containing: "ambiguous", .remove(.prefix("aaaaaaaa")))
    try expectRefusal(.notFound, containing: "no item in stream", .remove(.prefix("bbbbbbbb")))
    let outcome = try perform(.remove(.prefix("aaaaaaaa-1")))
    #expect(outcome?.event.id == a)
    #expect(outcome?.index == 0)
  }

  @Test func moveOntoItselfAppendsNothing() throws {
    _ = try append("a")
    _ = try append("b")
    #expect(try perform(.move(from: 1, to: 1, id: nil)) == nil)
    #expect(try export.count == 2)
  }

  @Test func expectVersionConflicts() throws {
    _ = try append("a")
    try expectRefusal(.conflict, containing: "is at version 1, not 0", .insert(InsertRequest(text: "x")), expect: 0)
    #expect(try perform(.insert(InsertRequest(text: "x")), expect: 1) != nil)
  }

  @Test func refusesBadTextAndNames() throws {
    try expectRefusal(.invalidInput, containing: "empty", .insert(InsertRequest(text: "")))
    try expectRefusal(
      .invalidInput, containing: "limit",
      .insert(InsertRequest(text: String(repeating: "x", count: Limits.maxTextBytes + 1))))
    try expectRefusal(
      .invalidInput, containing: "control character", .insert(InsertRequest(text: "x")), stream: "a\u{0}b")
    try expectRefusal(
      .invalidInput, containing: "limit", .insert(InsertRequest(text: "x")),
      stream: StreamName(String(repeating: "s", count: 201)))
    _ = try append(String(repeating: "x", count: Limits.maxTextBytes))
  }

  @Test func aBatchSeesItsOwnEarlierCommands() throws {
    let first = ItemID()
    let outcomes = try log.perform([
      WriteRequest(stream: "main", command: .insert(InsertRequest(text: "a", id: first))),
      WriteRequest(stream: "main", command: .insert(InsertRequest(index: 0, text: "b"))),
      WriteRequest(stream: "main", command: .move(from: 1, to: 0, id: first)),
    ])
    #expect(outcomes.map { $0?.event.seq } == [1, 2, 3])
    #expect(try log.items().items.map(\.text) == ["a", "b"])
  }
}

@Suite struct VerifierTests {
  @Test func namesTheSeqOfAFlippedBitAndRefusesToReplayPastIt() throws {
    let store = MemoryStore()
    let log = EventLog(store: store)
    for text in ["a", "b", "c"] { try log.append(text) }
    #expect(try log.verify().isClean)
    store.corruptRecord(at: 2, byte: 30)
    let report = try log.verify()
    #expect(
      report.problems.first?.hasPrefix("seq 2: corrupted record: checksum mismatch") == true, "\(report.problems)")
    #expect(report.problems.count == 1, "one flipped bit is one problem: \(report.problems)")
    #expect(throws: MsglogError.self) { try log.replay() }
    // Before the damage, replay still works.
    #expect(try log.replay(at: 1).items.map(\.text) == ["a"])
  }
}
