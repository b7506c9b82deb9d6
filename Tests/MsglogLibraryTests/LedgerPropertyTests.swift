import Foundation
import Msglog
import MsglogTestSupport
import Testing

@testable import MsglogCore

/// Random insert/remove/move sequences applied through the ledger to a
/// store and, independently, to a plain `Array`: they must agree after every
/// command, and a replay of every prefix of the log must equal the state the
/// ledger had at that point.
@Suite struct LedgerPropertyTests {
  /// One random command for a stream of `count` items, and its effect on the model.
  static func randomCommand(count: Int, model: [ItemID], rng: inout SeededGenerator) -> (WriteRequest.Command, [ItemID]?) {
    var next = model
    switch Int.random(in: 0..<10, using: &rng) {
    case 0..<4 where true:
      let index = Int(UInt64.random(in: 0...UInt64(count), using: &rng))
      let id = ItemID()
      next.insert(id, at: index)
      return (.insert(InsertRequest(index: index, text: "m\(rng.next() % 1000)", id: id)), next)
    case 4..<6 where count > 0:
      let i = Int.random(in: 0..<count, using: &rng)
      next.remove(at: i)
      return (.remove(.id(model[i])), next)
    case 6..<10 where count > 0:
      let from = Int.random(in: 0..<count, using: &rng)
      let to = Int.random(in: 0..<count, using: &rng)
      let x = next.remove(at: from)
      next.insert(x, at: to)
      return (.move(from: from, to: to, id: nil), from == to ? nil : next)
    default:
      // Refused commands must change nothing.
      return (.move(from: count, to: 0, id: nil), nil)
    }
  }

  @Test func ledgerAndReplayAgreeWithArrayModelAtEveryPrefix() throws {
    var rng = SeededGenerator(seed: 20_261_129)
    for sequence in 0..<2000 {
      let log = EventLog.inMemory()
      var models: [StreamName: [ItemID]] = [:]
      // The snapshot each stream had after each seq, to check replay --at.
      var history: [(seq: UInt64, stream: StreamName, ids: [ItemID])] = []
      let length = Int.random(in: 1...40, using: &rng)
      for _ in 0..<length {
        let stream: StreamName = ["a", "b"][Int.random(in: 0..<2, using: &rng)]
        let model = models[stream, default: []]
        let (command, expected) = Self.randomCommand(count: model.count, model: model, rng: &rng)
        let result = Result { try log.perform([WriteRequest(stream: stream, command: command)])[0] }
        switch (result, expected) {
        case (.success(let outcome?), let expected?):
          models[stream] = expected
          history.append((outcome.event.seq, stream, expected))
        case (.success(nil), nil):
          break  // a move onto itself appends nothing
        case (.failure(let error as MsglogError), nil):
          #expect(error.category == .refused, "sequence \(sequence)")
        default:
          Issue.record(
            "sequence \(sequence): \(command) gave \(result), model expected \(String(describing: expected))")
          return
        }
        let current = try log.items(of: stream)
        #expect(current.items.map(\.id) == models[stream, default: []], "sequence \(sequence)")
      }
      let report = try log.verify()
      #expect(report.isClean, "sequence \(sequence): \(report.problems)")
      // Replay at every seq equals the state the ledger had then.
      for entry in history {
        let replayed = try log.replay(entry.stream, at: entry.seq)
        #expect(replayed.items.map(\.id) == entry.ids, "sequence \(sequence), seq \(entry.seq)")
      }
    }
  }
}
