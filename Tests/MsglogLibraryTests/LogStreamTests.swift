import Foundation
import Msglog
import MsglogTestSupport
import Testing

/// One stream, one handle (issue 26 item 1), and events an app can apply to
/// a live list (item 3): `ItemChange` with `Int` positions and whole items,
/// `Item: Identifiable`, `ItemID` ↔ `UUID`, `edit(id:)`/`restore(id:)`. On a
/// real LMDB directory.
@Suite struct LogStreamTests {
  /// Every write of the handle lands in its stream only, with the outcome
  /// the log's own method gives; its reads are the log's reads of it.
  @Test func aHandleWritesAndReadsItsStreamOnly() throws {
    let dir = TemporaryDirectory()
    let log = try EventLog(dir.db)
    let board = log.stream("board")
    #expect(board.name == "board")
    try log.append("elsewhere", to: "chat")
    let a = try board.append("a", sender: "ann")
    let b = try board.insert("b", at: 0)
    try board.append(contentsOf: [NewItem("c"), NewItem("d")])
    #expect(try board.move(from: 0, to: 3)?.event.stream == "board")
    #expect(try board.move(from: 1, to: 1) == nil)
    #expect(try board.edit(id: a.event.id, text: "a2", sender: "bob") != nil)
    #expect(try board.edit(id: a.event.id, text: "a2") == nil)
    try board.remove(id: b.event.id)
    let restored = try board.restore(id: b.event.id, at: 0)
    #expect(restored.index == 0 && restored.event.stream == "board")
    let undone = try board.undo()
    #expect(undone?.event.undoes == restored.event.seq)
    let items = try board.items()
    #expect(items == (try log.items(of: "board")))
    #expect(items.items.map(\.text) == ["a2", "c", "d"], "\(items.items.map(\.text))")
    #expect(try log.items(of: "chat").items.map(\.text) == ["elsewhere"])
    #expect(try board.events().allSatisfy { $0.stream == "board" })
    #expect(try board.events().count == Int(items.version))
    var exported = 0
    try board.export { _ in exported += 1 }
    #expect(exported == Int(items.version))
    #expect(try board.replay(at: nil) == items)
    #expect(try board.diff(from: 0, to: items.seq).inserted.count == 3)
  }

  /// The changes of a stream's events, applied in order to the list the
  /// app showed (empty at a first launch), give the list as it is, step by
  /// step: read with `change(for:)` after each write, and from
  /// `changes(from:)` as they commit.
  @Test func changesKeepALiveListEqualToTheLog() async throws {
    let dir = TemporaryDirectory()
    let log = try EventLog(dir.db)
    let board = log.stream("board")
    var shown = try board.items().items  // before the database exists
    var random = SplitMix(state: 26)
    var steps = 0
    func check() throws {
      #expect(shown == (try board.items().items), "after step \(steps)")
    }
    for _ in 0..<300 {
      steps += 1
      let count = try board.items().items.count
      let live = try board.items().items
      var outcome: Outcome?
      switch (count, Int.random(in: 0..<7, using: &random)) {
      case (0, _), (_, 0): outcome = try board.insert("t\(steps)", at: Int.random(in: 0...count, using: &random))
      case (_, 1):
        outcome = try board.move(
          from: Int.random(in: 0..<count, using: &random), to: Int.random(in: 0..<count, using: &random))
      case (_, 2):
        outcome = try board.edit(id: live.randomElement(using: &random)!.id, text: "e\(steps)", sender: "bob")
      case (_, 3): outcome = try board.remove(id: live.randomElement(using: &random)!.id)
      case (_, 4), (_, 5): outcome = (try? board.undo()) ?? nil  // none to undo: nothing changes
      default: outcome = try board.append("a\(steps)", sender: "ann")
      }
      if let outcome {
        try log.change(for: outcome.event).apply(to: &shown)
      }
      try check()
    }
    // A restore's change carries the item whole: its text (the edited one),
    // author, time and seq as the list shows them.
    let item = try #require(try board.items().items.first)
    try board.edit(id: item.id, text: "edited before removal", sender: "cy")
    let removed = try board.remove(id: item.id)
    let back = try board.restore(id: item.id)
    let change = try log.change(for: back.event)
    guard case .restore(let restored, let at) = change.kind else {
      Issue.record("a restore reads as \(change.kind)")
      return
    }
    let listed = try board.items().items[at]
    #expect(at == back.index && restored == listed)
    #expect(restored.text == "edited before removal" && restored.sender == item.sender && restored.edited != nil)
    #expect(removed.event.id == restored.id)
    // And from the follower, from the first event on, into an empty list.
    var live: [Item] = []
    let head = try log.headSeq()
    for try await change in board.changes(from: 1) {
      change.apply(to: &live)
      if change.event.seq == head { break }
    }
    #expect(live == (try board.items().items))
  }

  /// An item erased since is said so in the changes of its events, as in a
  /// past list: its insert's item has `erased` (the erase's seq), not only
  /// an empty text an indexer would take for a message; so has an edit's.
  @Test func changesSayAnItemWasErased() async throws {
    let dir = TemporaryDirectory()
    let log = try EventLog(dir.db)
    let board = log.stream("board")
    let first = try board.append("gone soon", sender: "ann").event.id
    try board.edit(id: first, text: "gone soon, edited")
    try board.append("stays")
    let erasure = try log.erase([.id(first)], in: "board")
    let eraseSeq = try #require(erasure.seq)
    var items: [Item] = []
    for try await change in board.changes(from: 1) {
      switch change.kind {
      case .insert(let item, _), .edit(let item, _): items.append(item)
      default: break
      }
      if change.event.seq == eraseSeq { break }
    }
    #expect(items.map(\.erased) == [eraseSeq, eraseSeq, nil], "\(items)")
    #expect(items.map(\.text) == ["", "", "stays"], "\(items)")
    #expect(try board.replay(at: 1).items.first?.erased == eraseSeq)
  }

  /// SwiftUI's `ForEach` needs `Identifiable`; an app's model layer often
  /// holds Foundation's `UUID`.
  /// Updates of a stream asked from another stream's list end with an
  /// error the app can catch (they stopped the process before).
  @Test func updatesFromAnotherStreamsListAreRefused() async throws {
    let dir = TemporaryDirectory()
    let log = try EventLog(dir.db)
    try log.append("hello", to: "chat")
    let other = try log.stream("other").items()
    do {
      for try await _ in log.stream("chat").updates(from: other) {
        Issue.record("an update came of a list of another stream")
      }
      Issue.record("the updates ended without a word")
    } catch let error as MsglogError {
      #expect(error.category == .invalidInput)
      #expect("\(error)" == "updates of stream 'chat' were asked from a list of stream 'other'")
    }
  }

  @Test func itemsAreIdentifiableAndIdsConvertToUUIDs() throws {
    let log = EventLog.inMemory()
    let outcome = try log.stream("board").append("x")
    let item = try log.stream("board").items().items[0]
    func identity<T: Identifiable>(_ value: T) -> T.ID { value.id }
    #expect(identity(item) == outcome.event.id)
    let uuid = UUID(uuid: item.id.uuid)
    #expect(uuid.uuidString.lowercased() == item.id.text)
    #expect(ItemID(uuid: uuid.uuid) == item.id)
    let fresh = UUID()
    #expect(ItemID(uuid: fresh.uuid).text == fresh.uuidString.lowercased())
    // The id an app made is the item's id.
    let chosen = UUID()
    let made = try log.stream("board").append("y", id: ItemID(uuid: chosen.uuid))
    #expect(UUID(uuid: made.event.id.uuid) == chosen)
  }
}

/// A seeded generator (SplitMix64), so a failing run can be run again.
private struct SplitMix: RandomNumberGenerator {
  var state: UInt64
  mutating func next() -> UInt64 {
    state &+= 0x9E37_79B9_7F4A_7C15
    var z = state
    z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
    z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
    return z ^ (z >> 31)
  }
}
