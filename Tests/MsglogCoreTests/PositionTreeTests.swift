import MsglogCoreTestSupport
import Testing

@testable import MsglogCore

/// The fold's position tree against a plain `Array`: every operation at
/// random positions, runs of edits next to each other (the cursor's case),
/// a tree grown past several levels and emptied again (splits, merges, the
/// root giving way), checked whole at every step's end.
@Suite struct PositionTreeTests {
  enum Pattern: CaseIterable { case scattered, typing, appends, drain }

  @Test(arguments: Pattern.allCases) func agreesWithAnArray(_ pattern: Pattern) {
    var random = SeededGenerator(seed: 0x7EE + UInt64(Pattern.allCases.firstIndex(of: pattern)!))
    let tree = PositionTree()
    defer { tree.deallocate() }
    var model: [UInt32] = []
    var next: UInt32 = 0
    var cursor = 0
    let steps = pattern == .drain ? 60_000 : 40_000
    for step in 0..<steps {
      // Where the step happens: anywhere, or next to the last one.
      func position(upTo bound: Int) -> Int {
        switch pattern {
        case .scattered: return Int.random(in: 0...bound, using: &random)
        case .typing, .drain:
          cursor = max(0, min(bound, cursor + Int.random(in: -2...2, using: &random)))
          return cursor
        case .appends: return bound
        }
      }
      // Drain: grow to 30,000 and then take everything out.
      let removing =
        pattern == .drain ? step >= 30_000 : (!model.isEmpty && Int.random(in: 0..<10, using: &random) < 3)
      if removing, !model.isEmpty {
        let at = pattern == .appends ? Int.random(in: 0..<model.count, using: &random) : position(upTo: model.count - 1)
        #expect(tree.remove(at: at) == model.remove(at: at))
      } else if !removing {
        switch Int.random(in: 0..<10, using: &random) {
        case 0 where !model.isEmpty:
          let from = Int.random(in: 0..<model.count, using: &random)
          let to = position(upTo: model.count - 1)
          let moved = tree.remove(at: from)
          tree.insert(moved, at: to)
          model.insert(model.remove(at: from), at: to)
        case 1 where !model.isEmpty:
          let at = position(upTo: model.count - 1)
          #expect(tree.element(at: at) == model[at])
          tree.replace(at: at, with: next)
          model[at] = next
          next += 1
        default:
          let at = position(upTo: model.count)
          tree.insert(next, at: at)
          model.insert(next, at: at)
          next += 1
        }
      }
      #expect(tree.count == model.count)
      if step % 5_000 == 4_999 || step == steps - 1 {
        var walked: [UInt32] = []
        tree.forEach { walked.append($0) }
        #expect(walked == model, "step \(step)")
        if walked != model { return }
      }
    }
    // Emptied, it takes elements again.
    if pattern == .drain {
      #expect(tree.count == 0)
      tree.insert(7, at: 0)
      tree.insert(8, at: 1)
      var walked: [UInt32] = []
      tree.forEach { walked.append($0) }
      #expect(walked == [7, 8])
    }
  }

  @Test func aCopySharesNothing() {
    let tree = PositionTree()
    for k in 0..<1_000 { tree.insert(UInt32(k), at: k) }
    let copy = tree.copy()
    defer {
      tree.deallocate()
      copy.deallocate()
    }
    tree.remove(at: 0)
    #expect(copy.count == 1_000 && tree.count == 999)
    #expect(copy.element(at: 0) == 0 && tree.element(at: 0) == 1)
  }
}
