import Msglog
import MsglogTestSupport
import Testing

@testable import MsglogCore

/// `diff A B` as a collection view's batch update: applying it to the items
/// at A gives exactly the items at B (edited texts included), with the
/// fewest moves, and exactly the items at both whose text changed reloaded.
@Suite struct StreamDiffTests {
  /// The fewest moves any batch update can have: the items at both seqs
  /// minus a longest increasing subsequence, found here by O(n²) dynamic
  /// programming (independent of the O(n log n) one under test).
  static func fewestMoves(_ old: [ItemID], _ new: [ItemID]) -> Int {
    let newIndex = Dictionary(uniqueKeysWithValues: new.enumerated().map { ($1, $0) })
    let kept = old.compactMap { newIndex[$0] }
    var best = [Int](repeating: 1, count: kept.count)
    for i in kept.indices {
      for j in 0..<i where kept[j] < kept[i] { best[i] = max(best[i], best[j] + 1) }
    }
    return kept.count - (best.max() ?? 0)
  }

  @Test(arguments: [UInt64(1), 2, 3, 4, 5]) func applyingTheDiffGivesTheOtherList(seed: UInt64) throws {
    var rng = SeededGenerator(seed: seed)
    let log = EventLog.inMemory()
    var count = 0
    for _ in 0..<400 {
      let roll = Int.random(in: 0..<10, using: &rng)
      if count < 3 || roll < 4 {
        try log.insert("item", at: Int(UInt64.random(in: 0...UInt64(count), using: &rng)))
        count += 1
      } else if roll < 6 {
        let items = try log.items().items
        try log.remove(id: items[Int.random(in: 0..<count, using: &rng)].id)
        count -= 1
      } else if roll < 7 {
        // Edits, some undone: items at both seqs whose text differs are reloads.
        let items = try log.items().items
        let item = items[Int.random(in: 0..<count, using: &rng)]
        if Bool.random(using: &rng) {
          try log.edit(.id(item.id), text: "edited \(rng.next() % 1000)")
        } else {
          // Undoing may remove or restore an item too.
          _ = try? log.undo()
          count = try log.items().items.count
        }
      } else {
        let from = Int(UInt64.random(in: 0..<UInt64(count), using: &rng))
        try log.move(from: from, to: Int(UInt64.random(in: 0..<UInt64(count), using: &rng)))
      }
    }
    let head = try log.headSeq()
    for _ in 0..<60 {
      let a = UInt64.random(in: 0...head, using: &rng)
      let b = UInt64.random(in: 0...head, using: &rng)
      let old = try log.replay(at: a)
      let new = try log.replay(at: b)
      let diff = try log.diff(from: a, to: b)
      // Up to the time an item edited back to its text at A shows as edited:
      // the diff reloads items whose text differs (docs/REFERENCE.md).
      let applied = diff.apply(to: old.items)
      #expect(applied.map(\.id) == new.items.map(\.id) && applied.map(\.text) == new.items.map(\.text), "diff \(a) \(b)")
      for (got, want) in zip(applied, new.items) where got.text != old.items.first(where: { $0.id == got.id })?.text {
        #expect(got == want, "diff \(a) \(b): a reloaded item is the item at B")
      }
      #expect(diff.moved.count == Self.fewestMoves(old.items.map(\.id), new.items.map(\.id)), "diff \(a) \(b)")
      #expect(diff.removed.map(\.index) == diff.removed.map(\.index).sorted(by: >))
      #expect(diff.inserted.map(\.index) == diff.inserted.map(\.index).sorted())
      #expect(diff.moved.map(\.to) == diff.moved.map(\.to).sorted())
      #expect(diff.edited.map(\.index) == diff.edited.map(\.index).sorted())
      let oldText = Dictionary(uniqueKeysWithValues: old.items.map { ($0.id, $0.text) })
      let changed = new.items.filter { item in oldText[item.id].map { $0 != item.text } ?? false }
      #expect(diff.edited.map(\.item) == changed, "diff \(a) \(b)")
    }
    #expect(try log.diff(from: head, to: head).isEmpty)
  }
}
