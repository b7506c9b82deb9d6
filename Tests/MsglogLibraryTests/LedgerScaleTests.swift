import Foundation
import Msglog
import MsglogTestSupport
import Testing

@testable import MsglogCore

/// Thousands of commands on one stream: the stored order tree splits and
/// merges over several levels, checkpoints are taken often, and everything
/// must still agree with a plain Array — the current view, `replay --at`
/// from checkpoints, verify, and a rebuild of the derived tables.
@Suite struct LedgerScaleTests {
  @Test(arguments: [UInt64(7), 3])
  func storedTreeCheckpointsAndRebuildAgreeWithArray(seed: UInt64) throws {
    var rng = SeededGenerator(seed: seed)
    let log = EventLog.inMemory(configuration: .init(checkpointInterval: 16))
    let store = log.memoryStore
    var model: [ItemID] = []
    var history: [UInt64: [ItemID]] = [:]
    let steps = 3000
    for step in 0..<steps {
      let growing = step < steps * 2 / 3
      let roll = Int.random(in: 0..<10, using: &rng)
      let command: WriteRequest.Command
      var next = model
      if model.isEmpty || (growing ? roll < 6 : roll < 2) {
        let index = Int.random(in: 0...model.count, using: &rng)
        let id = ItemID()
        next.insert(id, at: index)
        command = .insert(InsertRequest(index: index, text: "t\(step)", id: id))
      } else if roll < 7 {
        let index = Int.random(in: 0..<model.count, using: &rng)
        // Half by full id, half by prefix of its text form.
        command = .remove(step % 2 == 0 ? .id(model[index]) : .prefix(String(model[index].text.prefix(13))))
        next.remove(at: index)
      } else {
        let from = Int.random(in: 0..<model.count, using: &rng)
        var to = Int.random(in: 0..<model.count, using: &rng)
        if to == from { to = (from + 1) % model.count }
        if to == from { continue }
        next.insert(next.remove(at: from), at: to)
        command = .move(from: from, to: to, id: nil)
      }
      let outcome = try log.perform([WriteRequest(stream: "big", command: command)])[0]
      model = next
      history[try #require(outcome).event.seq] = model
    }
    let current = try log.items(of: "big")
    #expect(current.items.map(\.id) == model)
    let report = try log.verify()
    #expect(report.isClean, "\(report.problems.prefix(3))")
    let checkpoints = try store.read { try $0.checkpointSeqs(of: "big") }
    #expect(checkpoints.count > 10)
    // replay --at from checkpoints equals the state the ledger had then.
    let head = UInt64(history.count)
    for _ in 0..<60 {
      let seq = UInt64.random(in: 1...head, using: &rng)
      let replayed = try log.replay("big", at: seq)
      #expect(replayed.items.map(\.id) == history[seq], "seq \(seq)")
      #expect(replayed.version == seq)
    }
    #expect(try log.replay("big") == current)
    // A rebuild reproduces derived tables that verify, and the same list.
    try store.write { try DerivedState.rebuild($0) }
    #expect(try store.read { try Verifier.verify($0) }.isClean)
    #expect(try store.read { try CurrentView.stream("big", in: $0) } == current)
    #expect(try store.read { try $0.checkpointSeqs(of: "big") }.count > 0)
  }
}
