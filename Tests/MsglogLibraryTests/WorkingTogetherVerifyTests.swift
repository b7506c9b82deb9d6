import Foundation
import Msglog
import MsglogTestSupport
import Testing

@testable import MsglogCore

/// `verify` of the new events: a record whose derived fields do not fit the
/// log (an edit that replaces the wrong text, a restore with the wrong text,
/// an undo of an undone event or of another stream's), and derived rows that
/// name the wrong text record, are each named; `repair` rebuilds the rows.
@Suite struct WorkingTogetherVerifyTests {
  /// a, b, c in main; x in other; edit a (seq 5), remove a (6), restore a (7),
  /// undo the restore (8), move c to 0 (9), undo it (10).
  static func log() throws -> (EventLog, [ItemID]) {
    let log = EventLog.inMemory(configuration: .init(checkpointInterval: 4))
    let ids = try ["a", "b", "c"].map { try log.append($0).event.id }
    try log.append("x", to: "other")
    try log.edit(.id(ids[0]), text: "a!")
    try log.remove(id: ids[0])
    try log.restore(.id(ids[0]))
    try log.undo()
    try log.move(from: 1, to: 0)
    try log.undo()
    #expect(try log.verify().isClean)
    return (log, ids)
  }

  /// Replaces the record at `seq` with `change` applied to its event.
  static func rewrite(_ log: EventLog, seq: UInt64, _ change: (inout Event) -> Void) throws {
    var event = try #require(try log.memoryStore.read { try $0.event(at: seq) })
    change(&event)
    let record = EventRecord.encode(event)
    log.memoryStore.damage { $0.records[Int(seq - 1)] = record }
  }

  @Test func anEditThatReplacesAnotherText() throws {
    let (log, ids) = try Self.log()
    try Self.rewrite(log, seq: 5) { $0.op = .edit(id: ids[0], text: "a!", sender: nil, index: 0, replaces: 2, inserted: 1) }
    let problems = try log.verify().problems
    #expect(
      problems.first
        == "seq 5: edit of \(ids[0].text) replaces the text of seq 2, but its text is that of seq 1 (stream 'main'; its later events are not checked)",
      "\(problems)")
    #expect(throws: MsglogError.self) { try log.replay("main") }
  }

  @Test func anEditThatNamesAnotherInsert() throws {
    let (log, ids) = try Self.log()
    try Self.rewrite(log, seq: 5) { $0.op = .edit(id: ids[0], text: "a!", sender: nil, index: 0, replaces: 1, inserted: 2) }
    #expect(try log.verify().problems.first?.hasPrefix("seq 5: edit of \(ids[0].text) names its insert at seq 2") == true)
  }

  @Test func aRestoreWithAnotherText() throws {
    let (log, ids) = try Self.log()
    try Self.rewrite(log, seq: 7) { $0.op = .restore(id: ids[0], index: 0, textSeq: 1) }
    let problems = try log.verify().problems
    #expect(
      problems.first?.hasPrefix(
        "seq 7: restore of \(ids[0].text) brings back the text of seq 1, but it had that of seq 5") == true, "\(problems)")
  }

  @Test func undosThatDoNotFit() throws {
    let (log, _) = try Self.log()
    // The undo of the move undoes the restore instead, which is undone already.
    try Self.rewrite(log, seq: 10) { $0.undoes = 7 }
    var problems = try log.verify().problems
    #expect(problems.first?.hasPrefix("seq 10: it undoes seq 7, which is undone already") == true, "\(problems)")
    try Self.rewrite(log, seq: 10) { $0.undoes = 4 }
    problems = try log.verify().problems
    #expect(problems.first?.hasPrefix("seq 10: it undoes seq 4, an event of stream 'other'") == true, "\(problems)")
    try Self.rewrite(log, seq: 10) { $0.undoes = 2 }
    problems = try log.verify().problems
    #expect(problems.first?.hasPrefix("seq 10: it undoes seq 2, an insert of") == true, "\(problems)")
    try Self.rewrite(log, seq: 10) { $0.undoes = 11 }
    problems = try log.verify().problems
    #expect(problems.first?.hasPrefix("seq 10: it undoes seq 11, no earlier event") == true, "\(problems)")
  }

  /// Derived rows that name the insert of an edited item instead of its
  /// edit (an older msglog's slot) are found, and rebuilt by repair.
  @Test func slotsAndRowsThatNameTheWrongTextRecord() throws {
    let log = EventLog.inMemory(configuration: .init(checkpointInterval: 2))
    let a = try log.append("a").event.id
    try log.append("b")
    try log.edit(.id(a), text: "a!")
    try log.edit(.id(a), text: "a!!")
    try log.remove(id: a)
    #expect(try log.verify().isClean)
    log.memoryStore.damage { state in
      state.ids[a]?.textSeq = 0
      for n in state.checkpoints["main"]!.indices {
        for k in state.checkpoints["main"]![n].slots.indices where state.checkpoints["main"]![n].slots[k].id == a {
          state.checkpoints["main"]![n].slots[k].seq = 1
        }
      }
    }
    let problems = try log.verify().problems
    #expect(problems.contains { $0.hasPrefix("table checkpoints: stream 'main' at seq") }, "\(problems)")
    #expect(
      problems.contains { $0 == "table ids: \(a.text) has insert seq 1, remove seq 5, leaf 0; the log says 1, remove seq 5, leaf 0, text seq 4" },
      "\(problems)")
    _ = try log.repair()
    #expect(try log.verify().isClean)
    // The restore brings back the last edit's text.
    try log.restore(.id(a))
    #expect(try log.items().items.first?.text == "a!!")
  }
}
