import Msglog
import MsglogCore
import MsglogTestSupport
import Testing

/// A replica keeps the local view its last write left (`SavedLocalView`),
/// so that a read does not perform every pending change again: kept by
/// every local write, the same bytes as the view computed afresh, ignored
/// once stale, checked by `verify`.
@Suite struct KeptLocalViewTests {
  let pair: ReplicaTests.Pair
  let replica: EventLog

  init() throws {
    pair = try ReplicaTests.Pair()
    try pair.server.append("a")
    try pair.server.append("b")
    replica = try pair.clone()
  }

  /// The kept row, decoded, and whether its stamp is the replica's now.
  func kept() throws -> (view: SavedLocalView, current: Bool)? {
    try replica.store.read { reader in
      let replicas = reader as! any ReplicaStateReader
      guard let row = try replicas.savedLocalView() else { return nil }
      let view = try row.withUnsafeBytes { bytes throws(DerivedDamage) in try SavedLocalView(decoding: bytes) }
      let stamp = try SavedLocalView.Stamp(of: replicas, state: try replicas.replicaState()!)
      return (view, view.stamp == stamp)
    }
  }

  /// The view computed by performing the pending changes now.
  func computed() throws -> [UInt8]? {
    try replica.store.read { reader in
      let replicas = reader as! any ReplicaStateReader
      let state = try replicas.replicaState()!
      return try LocalView.computed(over: replicas, state: state, now: Timestamp(milliseconds: 0))
        .saved(nextChange: state.nextChange)?.encoded()
    }
  }

  @Test func everyLocalWriteKeepsTheViewItLeaves() throws {
    #expect(try kept() == nil)
    let c = try replica.append("c")
    try replica.insert("d", at: 0)
    try replica.move(from: 3, to: 1)
    try replica.edit(id: c.event.id, text: "c2")
    try replica.remove(id: try replica.items().items[0].id)
    try replica.append("elsewhere", to: StreamName("other"))
    let (view, current) = try #require(try kept())
    #expect(current)
    #expect(view.stamp.pendingCount == 6)
    #expect(view.encoded() == (try computed()))
    #expect(try replica.items().items.map(\.text) == ["c2", "a", "b"])
    #expect(try replica.items().items.map(\.pending) == [true, false, false])
    #expect(try replica.pendingChanges().count == 6)
    #expect(try replica.verify().problems.isEmpty)
  }

  @Test func aReadUsesTheKeptViewAndVerifyComparesIt() throws {
    try replica.append("c")
    let earlier = try #require(try kept()).view
    try replica.append("d")
    // Put the earlier view back under the current stamp: a read now shows
    // what the kept view says (so reads use it), and verify sees it is not
    // the view the pending changes make.
    var planted = earlier
    planted.stamp = try #require(try kept()).view.stamp
    try plant(planted.encoded())
    #expect(try replica.items().items.map(\.text) == ["a", "b", "c"])
    #expect(try replica.verify().problems.contains { $0.contains("local-view") })
    // The next write keeps the right view again.
    try replica.append("e")
    #expect(try replica.items().items.map(\.text) == ["a", "b", "c", "d", "e"])
    #expect(try replica.verify().problems.isEmpty)
  }

  @Test func aStaleOrDamagedViewIsComputedAgain() throws {
    try replica.append("c")
    let earlier = try #require(try kept()).view
    try replica.append("d")
    let texts = ["a", "b", "c", "d"]
    // An earlier view under a stamp that is not the replica's now (its
    // head, next change or pending count differ) is read past.
    for change in [\SavedLocalView.Stamp.baseHead, \.nextChange, \.pendingCount] {
      var planted = earlier
      planted.stamp = try #require(try kept()).view.stamp
      planted.stamp[keyPath: change] += 1
      try plant(planted.encoded())
      #expect(try replica.items().items.map(\.text) == texts)
      #expect(try replica.verify().problems.isEmpty)
    }
    // A row that does not decode is read past, named by verify, replaced by the next write.
    try plant([1, 2, 3])
    #expect(try replica.items().items.map(\.text) == texts)
    #expect(try replica.verify().problems.contains { $0.contains("local view") })
    try replica.append("e")
    #expect(try kept()?.current == true)
    #expect(try replica.verify().problems.isEmpty)
  }

  @Test func aSyncLeavesNoKeptView() throws {
    try replica.append("c")
    try pair.server.insert("first", at: 0)
    _ = try replica.sync(with: pair.remote)
    #expect(try kept() == nil)
    #expect(try replica.items().items.map(\.text) == ["first", "a", "b", "c"])
    try replica.append("after sync")
    #expect(try kept()?.current == true)
    #expect(try replica.items().items.map(\.text) == ["first", "a", "b", "c", "after sync"])
  }

  func plant(_ row: [UInt8]) throws {
    try replica.store.write { writer in try (writer as! any ReplicaStateWriter).putSavedLocalView(row) }
  }

  @Test func aRepairDropsTheKeptView() throws {
    try replica.append("c")
    // A clean log is not rebuilt, and keeps its view.
    #expect(try replica.repair().repaired.isEmpty)
    #expect(try kept()?.current == true)
    // A rebuild renumbers the trees' nodes the kept view names: it goes.
    try plant([1, 2, 3])
    let report = try replica.repair()
    #expect(report.repaired.contains { $0.contains("local view") })
    #expect(report.after.problems.isEmpty)
    #expect(try kept() == nil)
    #expect(try replica.items().items.map(\.text) == ["a", "b", "c"])
  }
}
