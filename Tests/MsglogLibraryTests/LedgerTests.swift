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

  /// A prefix a program builds as `.prefix(…)` rather than parses is checked
  /// as a parsed one is: a non-hex character used to trap the ledger.
  @Test func aPrefixBuiltInCodeIsCheckedAsAParsedOne() throws {
    let a = try append("a", id: ItemID(canonical: "abcdef01-1111-4000-8000-000000000001")!)
    try expectRefusal(.invalidInput, containing: "malformed id", .remove(.prefix("zzzzzzzz")))
    try expectRefusal(.invalidInput, containing: "too short", .remove(.prefix("abc")))
    let outcome = try perform(.remove(.prefix("ABCDEF01-1")))
    #expect(outcome?.event.id == a)
  }

  /// Positions are `Int`s, as Swift's collections have them: a negative
  /// one is out of range like any other, and a batch near `Int.max` is
  /// refused rather than overflowing.
  @Test func negativeAndHugePositionsAreOutOfRange() throws {
    _ = try append("a")
    let before = try export
    #expect(throws: MsglogError.insertOutOfRange(stream: "main", index: -1, count: 1)) {
      try log.insert("x", at: -1)
    }
    #expect(throws: MsglogError.moveOutOfRange(stream: "main", end: .from, index: -1, count: 1)) {
      try log.move(from: -1, to: 0)
    }
    #expect(throws: MsglogError.moveOutOfRange(stream: "main", end: .to, index: -3, count: 1)) {
      try log.move(from: 0, to: -3)
    }
    #expect(throws: MsglogError.insertOutOfRange(stream: "main", index: .max, count: 1)) {
      try log.insert(contentsOf: [NewItem("x"), NewItem("y")], at: .max)
    }
    #expect(try export == before)
    let outcome = try log.insert("first", at: 0)
    #expect(outcome.index == 0)
    #expect(try log.move(from: 1, to: 0)?.index == 0)
  }

  /// The store's own failures reach the caller as `MsglogError`s, in
  /// memory as on disk: damage the in-memory store's order tree so that
  /// the row counts still agree, and a read names the damage.
  @Test func damageFoundInMemoryIsAMsglogError() throws {
    _ = try append("a")
    _ = try append("b")
    log.memoryStore.damage { state in
      let root = state.heads["main"]!.root
      state.nodes["main"]![root] = TreeNode(parent: 0, isLeaf: false, children: [999], counts: [2])
    }
    let expected = MsglogError.derivedDamage(DerivedDamage(.order, "the order of stream 'main' lacks node 999"))
    #expect(throws: expected) { try log.items() }
    #expect(throws: expected) { try log.read { try $0.forEachItem(of: "main") { _, _ in } } }
    #expect(throws: expected) { try log.append("c") }
    #expect(try log.verify().problems.contains { $0.hasPrefix("table order: stream 'main'") })
  }

  /// A log opened for reading refuses writes, in memory too.
  @Test func aReadOnlyLogRefusesWrites() throws {
    let readOnly = EventLog.inMemory(configuration: .init(access: .readOnly))
    #expect(throws: MsglogError.readOnly(location: "(memory)", store: .memory, reason: "opened for reading only")) {
      try readOnly.append("x")
    }
    #expect(try readOnly.headSeq() == 0)
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
    let log = EventLog.inMemory()
    let store = log.memoryStore
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
