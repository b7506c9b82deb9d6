import MsglogCoreTestSupport
import Testing

@testable import MsglogCore

/// `ListChange.changes(from:to:)`, which turns the list an app shows into
/// the list now: applied one after the other they give the new list, item
/// for item, with as few moves as `StreamDiff` makes and never an item in
/// both lists removed and inserted again.
@Suite struct ListChangeTests {
  static func item(_ n: Int, text: String? = nil, pending: Bool = false) -> Item {
    let bytes = (0..<16).map { UInt8(truncatingIfNeeded: $0 == 0 ? n : $0 == 1 ? n >> 8 : 0) }
    return Item(
      id: bytes.withUnsafeBytes { ItemID(bytes: $0) }, text: text ?? "m\(n)", sender: nil,
      time: Timestamp(milliseconds: 1_000), seq: pending ? 0 : UInt64(n) + 1, pending: pending)
  }

  static func applied(_ changes: [ListChange], to old: [Item]) -> [Item] {
    var items = old
    for change in changes { change.apply(to: &items) }
    return items
  }

  @Test func knownCases() {
    let a = Self.item(0)
    let b = Self.item(1)
    let c = Self.item(2)
    let d = Self.item(3)
    // One item to the end: one move, not three.
    #expect(ListChange.changes(from: [a, b, c, d], to: [b, c, d, a]) == [.move(id: a.id, from: 0, to: 3)])
    // A pending message confirmed: an update in place.
    var pending = Self.item(4, pending: true)
    var confirmed = pending
    confirmed.pending = false
    confirmed.seq = 9
    #expect(ListChange.changes(from: [a, pending], to: [a, confirmed]) == [.update(confirmed, at: 1)])
    // Others' message arrives before it, as the remote put it.
    #expect(
      ListChange.changes(from: [a, pending], to: [a, b, confirmed]) == [
        .insert(b, at: 1), .update(confirmed, at: 2),
      ])
    // A refused pending message leaves.
    pending.text = "refused"
    #expect(ListChange.changes(from: [a, pending, b], to: [a, b]) == [.remove(id: pending.id, at: 1)])
    // Nothing changed, nothing to do.
    #expect(ListChange.changes(from: [a, b], to: [a, b]).isEmpty)
    // A list that went wrong (an id twice) is mended.
    #expect(Self.applied(ListChange.changes(from: [a, b, a], to: [a, b]), to: [a, b, a]) == [a, b])
    #expect(Self.applied(ListChange.changes(from: [a, b], to: [b, a, c, a]), to: [a, b]) == [b, a, c, a])
  }

  /// Random lists with items removed, added, moved and changed: the
  /// changes applied give the new list, the moves are as many as
  /// `StreamDiff`'s, and no item in both lists leaves and comes back.
  @Test func randomListsTurnIntoEachOther() {
    var random = SeededGenerator(seed: 35)
    for round in 0..<2_000 {
      let count = Int.random(in: 0...24, using: &random)
      let old = (0..<count).map { Self.item($0, pending: Bool.random(using: &random)) }
      var new = old.filter { _ in Int.random(in: 0..<5, using: &random) > 0 }
      new.shuffle(using: &random)
      if Bool.random(using: &random) {
        // Mostly in order, a few moved, as a sync usually leaves it.
        new = old.filter { item in new.contains { $0.id == item.id } }
        for _ in 0..<Int.random(in: 0...2, using: &random) where new.count > 1 {
          new.insert(
            new.remove(at: Int.random(in: 0..<new.count, using: &random)),
            at: Int.random(in: 0..<new.count, using: &random))
        }
      }
      for n in count..<(count + Int.random(in: 0...4, using: &random)) {
        new.insert(Self.item(n), at: Int.random(in: 0...new.count, using: &random))
      }
      for index in new.indices where Int.random(in: 0..<4, using: &random) == 0 {
        new[index].pending.toggle()
        new[index].text += "'"
      }
      let changes = ListChange.changes(from: old, to: new)
      #expect(Self.applied(changes, to: old) == new, "round \(round)")
      let moves = changes.filter { if case .move = $0 { true } else { false } }.count
      let diff = StreamDiff(
        from: StreamContents(stream: .main, seq: 0, version: 0, items: old),
        to: StreamContents(stream: .main, seq: 0, version: 0, items: new))
      #expect(moves <= diff.moved.count, "round \(round)")
      let inBoth = Set(old.map(\.id)).intersection(new.map(\.id))
      for change in changes {
        switch change {
        case .insert(let item, _): #expect(!inBoth.contains(item.id), "round \(round)")
        case .remove(let id, _): #expect(!inBoth.contains(id), "round \(round)")
        case .move, .update: break
        }
      }
    }
  }
}
