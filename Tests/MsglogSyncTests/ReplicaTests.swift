import Msglog
import MsglogTestSupport
import Testing

/// A replica and its remote, both LMDB logs of this process, syncing
/// through the protocol's calls made in process (`LogRemote`).
@Suite struct ReplicaTests {
  final class Pair {
    let dir = TemporaryDirectory()
    let server: EventLog
    let remote: LogRemote

    init() throws {
      server = try EventLog(dir.path + "/server.lmdb")
      remote = LogRemote(server)
    }

    func clone(_ name: String = "replica") throws -> EventLog {
      let path = dir.path + "/" + name + ".lmdb"
      _ = try EventLog.clone(from: remote, remoteLocation: server.location, into: path)
      return try EventLog(path)
    }

    func exported(_ log: EventLog) throws -> [Event] {
      var events: [Event] = []
      try log.export { events.append($0) }
      return events
    }
  }

  @Test func cloneCopiesEveryEvent() throws {
    let pair = try Pair()
    try pair.server.append("one")
    try pair.server.append("two", to: StreamName("other"))
    try pair.server.move(from: 0, to: 0)
    let replica = try pair.clone()
    #expect(try pair.exported(replica) == pair.exported(pair.server))
    #expect(replica.isReplica)
    #expect(try replica.items().items.map(\.text) == ["one"])
  }

  @Test func writesPendUntilSync() throws {
    let pair = try Pair()
    try pair.server.append("a")
    try pair.server.append("b")
    let replica = try pair.clone()
    let appended = try replica.append("c")
    #expect(appended.pending == 1)
    let moved = try replica.move(from: 2, to: 0)
    #expect(moved?.pending == 2)
    #expect(try replica.items().items.map(\.text) == ["c", "a", "b"])
    #expect(try replica.items().items.map(\.pending) == [true, false, false])
    #expect(try pair.server.items().items.map(\.text) == ["a", "b"])
    #expect(try replica.headSeq() == 2)

    let report = try replica.sync(with: pair.remote)
    #expect(report.pushed == 2)
    #expect(report.pulled == 2)
    #expect(report.refused.isEmpty)
    #expect(try pair.server.items().items.map(\.text) == ["c", "a", "b"])
    #expect(try replica.items().items.map(\.text) == ["c", "a", "b"])
    #expect(try pair.exported(replica) == pair.exported(pair.server))
    #expect(try replica.pendingChanges().isEmpty)
    let origins = try pair.exported(pair.server).compactMap(\.origin).map(\.change)
    #expect(origins == [1, 2])
  }

  /// An undo's sender goes into its change only when its undoing is an
  /// edit, the one undoing that names who made it: a remote older than
  /// undo's sender refuses the member, so an undo of a move keeps none.
  @Test func anUndoNamesItsSenderOnlyWhenItsUndoingIsAnEdit() throws {
    let pair = try Pair()
    try pair.server.append("a")
    try pair.server.append("b")
    let replica = try pair.clone()
    let a = try replica.items().items[0].id
    try replica.edit(id: a, text: "a, edited", sender: "ann")
    try replica.undo(sender: "bob")  // an edit back
    try replica.move(from: 0, to: 1)
    try replica.undo(sender: "bob")  // a move back
    let intents = try replica.pendingChanges().map(\.intent)
    #expect(intents.count == 4)
    #expect(intents[1] == .undo(.change(1), sender: "bob"))
    #expect(intents[3] == .undo(.change(3), sender: nil))
    _ = try replica.sync(with: pair.remote)
    let undone = try pair.exported(pair.server).filter { $0.undoes != nil }
    #expect(undone.count == 2)
    if case .edit(_, _, let sender, _, _, _) = undone.first?.op {
      #expect(sender == "bob")
    } else {
      Issue.record("\(undone)")
    }
    #expect(try pair.exported(replica) == pair.exported(pair.server))
  }

  @Test func aPushSentTwiceIsDoneOnce() throws {
    let pair = try Pair()
    try pair.server.append("a")
    let replica = try pair.clone()
    try replica.append("b")
    let state = try replica.replicaState()!
    let changes = try replica.pendingChanges()
    let push = PushRequest(log: state.log, replica: state.replica, secret: state.secret!, changes: changes)
    let first = try pair.remote.push(push)
    let again = try pair.remote.push(push)
    #expect(first == again)
    #expect(try pair.server.items().items.map(\.text) == ["a", "b"])
    _ = try replica.sync(with: pair.remote)
    #expect(try pair.exported(replica) == pair.exported(pair.server))
  }

  @Test func aMoveLandsAfterItsPredecessorWhenOthersWrote() throws {
    let pair = try Pair()
    for text in ["a", "b", "c", "d"] { try pair.server.append(text) }
    let replica = try pair.clone()
    // The user drags d after a: a d b c.
    try replica.move(from: 3, to: 1)
    // Meanwhile someone inserts x at the front and removes b.
    try pair.server.insert("x", at: 0)
    let b = try pair.server.items().items[2].id
    try pair.server.remove(id: b)
    let report = try replica.sync(with: pair.remote)
    #expect(report.rebased == 1)
    #expect(try pair.server.items().items.map(\.text) == ["x", "a", "d", "c"])
    #expect(try replica.items().items.map(\.text) == ["x", "a", "d", "c"])
  }

  @Test func aRefusedChangeIsReportedAndDropped() throws {
    let pair = try Pair()
    try pair.server.append("a")
    let replica = try pair.clone()
    let a = try replica.items().items[0].id
    try replica.edit(.id(a), text: "A")
    try pair.server.remove(id: a)
    let report = try replica.sync(with: pair.remote)
    #expect(report.refused.count == 1)
    #expect(report.pushed == 1)
    #expect(try replica.pendingChanges().isEmpty)
    #expect(try pair.exported(replica) == pair.exported(pair.server))
  }
}
