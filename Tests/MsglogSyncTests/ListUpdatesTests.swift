import Msglog
import MsglogTestSupport
import Synchronization
import Testing

/// `updates(from:)` on a replica and its remote in this process (the
/// protocol's calls made in process, `LogRemote`): the list an app shows,
/// pending writes included, kept right through syncs. Against a real
/// `msglog serve`: `ListUpdatesServedTests`.
@Suite struct ListUpdatesTests {
  final class Pair {
    let dir = TemporaryDirectory()
    let server: EventLog
    let remote: LogRemote
    let replica: EventLog

    init(items: Int, configuration: EventLog.Configuration = EventLog.Configuration()) throws {
      server = try EventLog(dir.path + "/server.lmdb")
      for n in 0..<items { try server.append("m\(n)", sender: "bob", to: "chat") }
      remote = LogRemote(server)
      _ = try EventLog.clone(from: remote, remoteLocation: server.location, into: dir.path + "/replica.lmdb")
      replica = try EventLog(dir.path + "/replica.lmdb", configuration: configuration)
    }
  }

  /// Issue 35's app: a message written offline, the list read with it
  /// pending, then a sync. README's old pattern (`changes(from: shown.seq +
  /// 1)`) showed it twice, 24 items where `items()` had 23.
  @Test func aMessageWrittenOfflineIsShownOnceThroughASync() async throws {
    let pair = try Pair(items: 22)
    let chat = pair.replica.stream("chat")
    let mine = try chat.append("on the train", sender: "ann")
    let shown = try chat.items()
    #expect(shown.items.count == 23 && shown.items.last?.pending == true)
    let list = ShownList(chat, from: shown)
    try pair.server.append("from bob", sender: "bob", to: "chat")
    let report = try pair.replica.sync(with: pair.remote)
    #expect(report.pushed == 1 && report.pulled == 2)
    let now = try chat.items()
    #expect(now.items.count == 24 && !now.items.contains(where: \.pending))
    await list.reach(now)
    // Confirmed: an update of the item it showed, after bob's message
    // (which the remote had first), never a second copy.
    let changes = list.updates.flatMap(\.changes)
    #expect(!changes.contains { if case .insert(let item, _) = $0 { item.id == mine.event.id } else { false } })
    #expect(
      changes.contains {
        if case .update(let item, _) = $0 { item.id == mine.event.id && !item.pending } else { false }
      })
  }

  /// A change the remote refuses (its item removed there meanwhile) comes
  /// undone: the item edited offline leaves the list once, as the remote's
  /// remove says.
  @Test func aChangeTheRemoteRefusedComesUndone() async throws {
    let pair = try Pair(items: 3)
    let chat = pair.replica.stream("chat")
    let second = try chat.items().items[1]
    try chat.edit(id: second.id, text: "m1, edited offline")
    let shown = try chat.items()
    #expect(shown.items[1].pending && shown.items[1].text == "m1, edited offline")
    let list = ShownList(chat, from: shown)
    try pair.server.remove(id: second.id, from: "chat")
    let report = try pair.replica.sync(with: pair.remote)
    #expect(report.refused.map(\.change) == [1])
    await list.reach(try chat.items())
    #expect(list.list.items.map(\.text) == ["m0", "m2"])
  }

  /// Each write made here shows at once where it was made, and the list
  /// follows writes to other streams without a change.
  @Test func pendingWritesShowAsTheyAreMade() async throws {
    let pair = try Pair(items: 2)
    let chat = pair.replica.stream("chat")
    let list = ShownList(chat, from: try chat.items())
    try chat.append("a", sender: "ann")
    await list.reach(try chat.items())
    try chat.move(from: 2, to: 0)
    await list.reach(try chat.items())
    try pair.replica.append("elsewhere", to: "board")
    try chat.insert("b", at: 1)
    await list.reach(try chat.items())
    try chat.undo()
    await list.reach(try chat.items())
    #expect(list.list.items.map(\.text) == ["a", "m0", "m1"])
    #expect(list.updates.count == 4)
  }

  /// A pending message keeps the time it was written at every read of the
  /// local view (it was dated when the view was read), so a list compares
  /// equal to `items()` until a sync dates it the remote's way.
  @Test func aPendingMessageKeepsItsTime() throws {
    let ticks = Atomic<Int64>(1_000)
    var configuration = EventLog.Configuration()
    configuration.clock = { Timestamp(milliseconds: ticks.add(1_000, ordering: .relaxed).newValue) }
    let pair = try Pair(items: 1, configuration: configuration)
    let chat = pair.replica.stream("chat")
    let outcome = try chat.append("a", sender: "ann")
    let first = try chat.items()
    #expect(first == (try chat.items()))
    #expect(first.items.last?.time == outcome.event.time)
  }

  /// What a pending write's outcome says: no seq yet, its change's number.
  @Test func aPendingWriteHasNoSeqYet() throws {
    let pair = try Pair(items: 1)
    #expect(pair.replica.isReplica && !pair.server.isReplica)
    let outcome = try pair.replica.append("a", to: "chat")
    #expect(outcome.status == .pending(change: 1) && outcome.pending == 1)
    #expect(outcome.event.seq == 0)
    #expect(outcome.event.version == 2)  // the local view's: what expectVersion is checked against
    let undone = try #require(try pair.replica.undo(in: "chat"))
    #expect(undone.status == .pending(change: 2) && undone.event.undoes == nil)
    let done = try pair.server.append("b", to: "chat")
    #expect(done.status == .committed(seq: 2) && done.event.seq == 2)
  }

  /// On a log that is not a replica the updates are its events', from the
  /// list shown: what `changes(from:)` tells, in batches.
  @Test func aLogThatIsNotAReplicaToo() async throws {
    let dir = TemporaryDirectory()
    let log = try EventLog(dir.path + "/log.lmdb")
    let chat = log.stream("chat")
    let list = ShownList(chat, from: try chat.items())
    let first = try chat.append("one")
    await list.reach(try chat.items())
    try chat.append("two")
    try chat.edit(id: first.event.id, text: "one, edited")
    try chat.move(from: 1, to: 0)
    try chat.remove(id: first.event.id)
    try chat.undo()
    await list.reach(try chat.items())
    #expect(list.list.items.map(\.text) == ["two", "one, edited"])
  }

  /// A trim that drops events after the list shown (another process's
  /// `msglog trim` while the app's live list waited) leaves the live list
  /// right: the events are gone, so the list is read and the update is the
  /// difference. An app developer's pass found the follower folding what
  /// was left onto the list shown — and the app crashing, an index out of
  /// range.
  @Test func aTrimPastTheListShownIsReadNotFolded() async throws {
    let dir = TemporaryDirectory()
    let log = try EventLog(dir.path + "/log.lmdb")
    let board = log.stream("board")
    for i in 1...5 { try board.append("a\(i)") }
    var shown = try board.items()
    var live = board.updates(from: shown).makeAsyncIterator()
    try board.append("b1")
    if let update = try await live.next() { update.apply(to: &shown) }
    for i in 1...6 { try board.append("c\(i)") }
    _ = try log.trim(before: 10)
    let now = try board.items()
    while shown.seq < now.seq, let update = try await live.next() { update.apply(to: &shown) }
    #expect(shown.items.map(\.text) == now.items.map(\.text))
    #expect(shown.version == now.version)
  }
}
