import Foundation
import Testing

@testable import MsglogCore

/// Random insert/remove/move sequences applied through the ledger to a
/// store and, independently, to a plain `Array`: they must agree after every
/// command, and a replay of every prefix of the log must equal the state the
/// ledger had at that point.
@Suite struct LedgerPropertyTests {
  /// A deterministic generator, so that a failure names a reproducible seed.
  struct SplitMix: RandomNumberGenerator {
    var state: UInt64
    mutating func next() -> UInt64 {
      state &+= 0x9E37_79B9_7F4A_7C15
      var z = state
      z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
      z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
      return z ^ (z >> 31)
    }
  }

  /// One random command for a stream of `count` items, and its effect on the model.
  static func randomCommand(count: Int, model: [ItemID], rng: inout SplitMix) -> (Command, [ItemID]?) {
    var next = model
    switch Int.random(in: 0..<10, using: &rng) {
    case 0..<4 where true:
      let index = UInt64.random(in: 0...UInt64(count), using: &rng)
      let id = ItemID()
      next.insert(id, at: Int(index))
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
      return (.move(from: UInt64(from), to: UInt64(to), id: nil), from == to ? nil : next)
    default:
      // Refused commands must change nothing.
      return (.move(from: UInt64(count), to: 0, id: nil), nil)
    }
  }

  @Test func ledgerAndReplayAgreeWithArrayModelAtEveryPrefix() throws {
    var rng = SplitMix(state: 20_261_129)
    for sequence in 0..<2000 {
      let store = MemoryStore()
      var models: [StreamName: [ItemID]] = [:]
      // The snapshot each stream had after each seq, to check replay --at.
      var history: [(seq: UInt64, stream: StreamName, ids: [ItemID])] = []
      let length = Int.random(in: 1...40, using: &rng)
      for _ in 0..<length {
        let stream: StreamName = ["a", "b"][Int.random(in: 0..<2, using: &rng)]
        let model = models[stream, default: []]
        let (command, expected) = Self.randomCommand(count: model.count, model: model, rng: &rng)
        let result = Result {
          try store.write { writer in
            let session = try LedgerSession(writer: writer, now: Timestamp(milliseconds: 1))
            let outcome = try session.perform(WriteRequest(stream: stream, command: command))
            try session.finish()
            return outcome
          }
        }
        switch (result, expected) {
        case (.success(let outcome?), let expected?):
          models[stream] = expected
          history.append((outcome.event.seq, stream, expected))
        case (.success(nil), nil):
          break  // a move onto itself appends nothing
        case (.failure(let error as MsglogError), nil):
          #expect(error.kind == .refused, "sequence \(sequence)")
        default:
          Issue.record(
            "sequence \(sequence): \(command) gave \(result), model expected \(String(describing: expected))")
          return
        }
        let current = try store.read { try CurrentView.stream(stream, in: $0) }
        #expect(current.items.map(\.id) == models[stream, default: []], "sequence \(sequence)")
      }
      let report = try store.read { try Verifier.verify($0) }
      #expect(report.isClean, "sequence \(sequence): \(report.problems)")
      // Replay at every seq equals the state the ledger had then.
      for entry in history {
        let replayed = try store.read { try Replay.stream(entry.stream, at: entry.seq, in: $0) }
        #expect(replayed.items.map(\.id) == entry.ids, "sequence \(sequence), seq \(entry.seq)")
      }
    }
  }
}
