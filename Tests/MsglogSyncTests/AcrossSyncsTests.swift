import Foundation
import MsglogTestSupport
import Testing

#if canImport(Glibc)
  import Glibc
#endif

/// What a replica keeps and reports across syncs: the counts of a sync
/// that follows one cut short, `--reset`'s numbering, a new address for
/// the remote.
@Suite(.serialized) struct AcrossSyncsTests {
  typealias Pair = SyncCommandTests.Pair

  /// The server's events made from `replica`'s changes: change → how many.
  static func changes(of replica: Sandbox, at server: Sandbox, db: [String] = []) throws -> [Int: Int] {
    try changes(by: try SyncFaultSimulationTests.replicaID(of: replica), at: server, db: db)
  }

  /// The server did the push, the pull's answer was cut: the next sync
  /// reports every change that stops pending in it (P), and among them
  /// those that landed elsewhere than their user saw (R) — here all eight,
  /// since the office wrote first.
  @Test(arguments: [Store.lmdb, .postgres])
  func aSyncAfterACutOneCountsWhatItSettles(store: Store) throws {
    let pair = try Pair(store: store)
    let proxy = FaultProxy(target: pair.served.port)
    defer { proxy.stop() }
    #expect(pair.replica.run(["clone", proxy.url]).code == 0)
    for i in 1...8 { _ = pair.onReplica("append", "offline \(i)") }
    _ = pair.server.append("from the office")
    // hello, the check, the push pass; the pull's answer is cut.
    proxy.next([.pass, .pass, .pass, .cutAnswer, .cutAnswer])
    let cut = pair.onReplica("sync")
    #expect(cut.code == 1 && cut.stdout.isEmpty, "\(cut)")
    #expect(proxy.counts[.cutAnswer, default: 0] >= 1, "\(proxy.history)")
    proxy.forgetQueued()
    #expect(try Self.changes(of: pair.replica, at: pair.server).count == 8, "the push was not done")
    let sync = pair.onReplica("sync", "--json")
    #expect(sync.stdout == #"{"pushed":8,"rebased":8,"refused":[],"pulled":9,"seq":11}"# + "\n", "\(sync)")
    pair.expectInSync()
  }

  /// The server's events made under replica id `id`: change → how many.
  /// (`db`: `--db URL` of another database of the server's, if it is served.)
  static func changes(by id: String, at server: Sandbox, db: [String] = []) throws -> [Int: Int] {
    var count: [Int: Int] = [:]
    for line in server.run(db + ["log", "--all", "--json"], useDefaultDB: db.isEmpty).stdout.split(separator: "\n") {
      guard let event = try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any],
        let origin = event["origin"] as? [String: Any], origin["replica"] as? String == id,
        let change = origin["change"] as? Int
      else { continue }
      count[change, default: 0] += 1
    }
    return count
  }

  /// `sync --reset` against a remote that still holds the replica's log
  /// pushes the pending changes under the old id first, each once, then
  /// copies the remote afresh under a new id, whose first change is 1.
  @Test(arguments: [Store.lmdb, .postgres])
  func aResetPushesEachChangeOnce(store: Store) throws {
    let pair = try Pair(store: store)
    let url = try #require(pair.served.url)
    #expect(pair.replica.run(["clone", url]).code == 0)
    _ = pair.onReplica("append", "a")
    _ = pair.onReplica("append", "b")
    #expect(pair.onReplica("sync").code == 0)
    // Changes 3, 4 and 5, pending.
    _ = pair.onReplica("append", "c")
    let hello = try #require(pair.server.run(["list", "--json"]).stdout.firstMatch(of: /"id":"([0-9a-f-]{36})"/)?.1)
    #expect(pair.onReplica("remove", String(hello)).code == 0)
    #expect(pair.onReplica("move", "0", "1").code == 0)
    let old = try SyncFaultSimulationTests.replicaID(of: pair.replica)
    let reset = pair.onReplica("sync", "--reset", "--json")
    #expect(reset.code == 0 && reset.stdout.contains(#""pushed":3,"rebased":0,"refused":[]"#), "\(reset)")
    pair.expectInSync()
    #expect(try Self.changes(by: old, at: pair.server) == [1: 1, 2: 1, 3: 1, 4: 1, 5: 1])
    #expect(try SyncFaultSimulationTests.replicaID(of: pair.replica) != old)
    #expect(try Self.changes(of: pair.replica, at: pair.server).isEmpty)
    #expect(pair.server.run(["list"]).lines.map { String($0.split(separator: " ").last!) } == ["a", "world", "b", "c"])
    // The new id's first write is its change 1.
    #expect(pair.onReplica("append", "d", "--json").stdout.contains(#""pending":1"#))
    #expect(pair.onReplica("sync").code == 0)
    #expect(try Self.changes(of: pair.replica, at: pair.server) == [1: 1])
    pair.expectInSync()
  }

  /// A push done whose answer was lost, then `sync --reset` by hand: the
  /// remote answers the changes under the id they were made under, so
  /// none is done twice (under a new id the move was made again and the
  /// remove refused as "already removed").
  @Test(arguments: [Store.lmdb, .postgres])
  func aResetAfterALostAnswerDoesNothingTwice(store: Store) throws {
    let pair = try Pair(items: ["a", "b", "c"], store: store)
    let proxy = FaultProxy(target: pair.served.port)
    defer { proxy.stop() }
    #expect(pair.replica.run(["clone", proxy.url]).code == 0)
    let ids = pair.server.run(["list", "--json"]).stdout.matches(of: /"id":"([0-9a-f-]{36})"/).map { String($0.1) }
    #expect(pair.onReplica("move", "0", "2").code == 0)
    #expect(pair.onReplica("remove", ids[1]).code == 0)
    #expect(pair.onReplica("append", "d").code == 0)
    let old = try SyncFaultSimulationTests.replicaID(of: pair.replica)
    // hello, the check; the push is done and its answer cut.
    proxy.next([.pass, .pass, .cutAnswer])
    #expect(pair.onReplica("sync").code == 1)
    proxy.forgetQueued()
    #expect(try Self.changes(by: old, at: pair.server) == [1: 1, 2: 1, 3: 1], "the push was not done")
    let reset = pair.onReplica("sync", "--reset")
    #expect(reset.code == 0 && reset.stdout.hasPrefix("pushed 3 (0 rebased, 0 refused)"), "\(reset)")
    #expect(try Self.changes(by: old, at: pair.server) == [1: 1, 2: 1, 3: 1])
    #expect(try Self.changes(of: pair.replica, at: pair.server).isEmpty)
    #expect(pair.server.run(["list"]).lines.map { String($0.split(separator: " ").last!) } == ["c", "a", "d"])
    pair.expectInSync()
  }

  /// A remote restored from an older copy no longer holds the replica's
  /// head: `sync --reset` numbers the pending change again under a new id
  /// and pushes it, once. (PostgreSQL's older copy: a database made from
  /// the log's as a template, served in its place.)
  @Test(arguments: [Store.lmdb, .postgres])
  func aResetFromARestoredRemoteNumbersAgain(store: Store) throws {
    let pair = try Pair(store: store)
    let url = try #require(pair.served.url)
    let copy = pair.server.dir + "/older-copy"
    var older: (name: String, url: String)? = nil
    defer { older.map { PostgresCluster.dropDatabase($0.name) } }
    if store == .lmdb {
      #expect(pair.server.run(["backup", copy]).code == 0)
    } else {
      _ = pair.served.stop()
      older = PostgresCluster.copyDatabase(try #require(pair.server.databaseName))
      pair.served = try ServedLog.running(pair.server, listen: "127.0.0.1:\(pair.served.port)")
    }
    #expect(pair.replica.run(["clone", url]).code == 0)
    _ = pair.onReplica("append", "synced")
    #expect(pair.onReplica("sync").code == 0)
    _ = pair.onReplica("append", "pending")
    _ = pair.onReplica("append", "and another")
    let old = try SyncFaultSimulationTests.replicaID(of: pair.replica)
    var restored: [String] = []
    if let older {
      let port = pair.served.port
      _ = pair.served.stop()
      restored = ["--db", older.url]
      #expect(pair.server.run(restored + ["append", "after the restore"], useDefaultDB: false).code == 0)
      pair.served = try ServedLog.running(pair.server, restored, listen: "127.0.0.1:\(port)")
    } else {
      pair.served = try pair.served.restored(pair.server, from: copy) {
        #expect(pair.server.run(["append", "after the restore"]).code == 0)
      }
    }
    #expect(pair.onReplica("sync").code == 1)
    let reset = pair.onReplica("sync", "--reset")
    #expect(reset.code == 0 && reset.stdout.hasPrefix("pushed 2 (0 rebased, 0 refused)"), "\(reset)")
    func onServed(_ args: String...) -> Run { pair.server.run(restored + args, useDefaultDB: restored.isEmpty) }
    #expect(try Self.changes(by: old, at: pair.server, db: restored).isEmpty)
    #expect(try Self.changes(of: pair.replica, at: pair.server, db: restored) == [1: 1, 2: 1])
    #expect(
      onServed("list").lines.map { String($0.split(separator: " ").last!) } == [
        "hello", "world", "restore", "pending", "another",
      ])
    #expect(pair.replica.export() == onServed("export").stdout)
  }

  /// Pending undos of synced events, then `sync --reset` onto the remote
  /// restored from an older copy, where another writer's event took one
  /// of their seqs: that undo is refused at the reset — it would have
  /// removed the other's message — and listed; the undo of an event the
  /// restored remote still holds is done.
  @Test func aResetRefusesAnUndoOfAnEventTheRemoteNoLongerHolds() throws {
    let pair = try Pair(items: ["a", "b", "c", "d"])
    let copy = pair.server.dir + "/older-copy"
    #expect(pair.server.run(["backup", copy]).code == 0)
    #expect(pair.replica.run(["clone", try #require(pair.served.url)]).code == 0)
    _ = pair.onReplica("append", "x")
    #expect(pair.onReplica("sync").code == 0)
    #expect(pair.onReplica("undo", "5").code == 0)
    #expect(pair.onReplica("undo", "2").code == 0)
    pair.served = try pair.served.restored(pair.server, from: copy) {
      _ = pair.server.run(["append", "--sender", "boss", "important"])
    }
    let reset = pair.onReplica("sync", "--reset")
    #expect(reset.code == 0 && reset.stdout.hasPrefix("pushed 2 (0 rebased, 1 refused)"), "\(reset)")
    #expect(reset.stderr.contains("the event it undoes, at seq 5, is not in the log the replica was reset to"))
    #expect(
      pair.server.run(["list"]).lines.map { String($0.split(separator: " ").last!) } == ["a", "c", "d", "important"])
    let status = pair.onReplica("status", "--json").stdout
    #expect(
      status.contains(
        #""refused":[{"pending":2,"op":"undo","stream":"main","error":"the event it undoes, at seq 5, is not in the log"#
      ),
      "\(status)")
    pair.expectInSync()
  }

  /// The same onto a remote restored to before the undone event, and an
  /// undo of that undo: the event is past the remote's head, so the undo
  /// is refused, and the undo of it with it (it appended nothing).
  @Test func aResetRefusesAnUndoPastTheRemotesHeadAndItsUndo() throws {
    let pair = try Pair(items: ["a", "b"])
    let copy = pair.server.dir + "/older-copy"
    #expect(pair.server.run(["backup", copy]).code == 0)
    #expect(pair.replica.run(["clone", try #require(pair.served.url)]).code == 0)
    _ = pair.onReplica("append", "x")
    #expect(pair.onReplica("sync").code == 0)
    #expect(pair.onReplica("undo", "3").code == 0)
    #expect(pair.onReplica("undo", "4").code == 0)  // the undo just made, event 4 of the local view
    pair.served = try pair.served.restored(pair.server, from: copy)
    let reset = pair.onReplica("sync", "--reset")
    #expect(
      reset.code == 0 && reset.stdout.hasPrefix("pushed 2 (0 rebased, 2 refused), pulled 2, at seq 2"), "\(reset)")
    let status = pair.onReplica("status", "--json").stdout
    #expect(
      status.contains(#"{"pending":2,"op":"undo","stream":"main","error":"the event it undoes, at seq 3, is not"#))
    #expect(status.contains(#"{"pending":3,"op":"undo","stream":"main","error":"change 2"#), "\(status)")
    pair.expectInSync()
  }

  /// A reset numbers the pending changes again from 1, and keeps the
  /// refusals under the numbers they had: a later refusal of the new
  /// change 1 is listed beside the old one, not in its place.
  @Test func aResetKeepsTheRefusalsItHad() throws {
    let pair = try Pair()
    let url = try #require(pair.served.url)
    #expect(pair.replica.run(["clone", url]).code == 0)
    let ids = pair.server.run(["list", "--json"]).stdout.matches(of: /"id":"([0-9a-f-]{36})"/).map { String($0.1) }
    try #require(ids.count == 2)
    // Both remove the same item, the server first: each time change 1 is refused.
    func removeOnBoth(_ id: String) -> Run {
      _ = pair.onReplica("remove", id)
      _ = pair.server.run(["remove", id])
      return pair.onReplica("sync")
    }
    #expect(removeOnBoth(ids[0]).stdout.hasPrefix("pushed 1 (0 rebased, 1 refused)"))
    #expect(pair.onReplica("sync", "--reset").code == 0)
    let again = removeOnBoth(ids[1])
    #expect(again.stdout.hasPrefix("pushed 1 (0 rebased, 1 refused)"), "\(again)")
    let status = pair.onReplica("status", "--json").stdout
    #expect(status.matches(of: #/\{"pending":1,"op":"remove"/#).count == 2, "\(status)")
    #expect(status.contains(ids[0]) && status.contains(ids[1]), "\(status)")
    pair.expectInSync()
  }

  /// The server moves to another address: `sync --remote URL` follows it
  /// once the log there is found to be the replica's, and keeps it; another
  /// log at an address is refused and nothing is kept.
  @Test func aReplicaFollowsItsRemoteToANewAddress() throws {
    let pair = try Pair()
    let old = try #require(pair.served.url)
    #expect(pair.replica.run(["clone", old]).code == 0)
    _ = pair.onReplica("append", "on the move")
    // The new server starts while the old one still holds its port, so
    // that the system cannot hand the new one the old address again.
    let oldServed = pair.served
    pair.served = try ServedLog.running(pair.server)
    _ = oldServed.stop()
    let new = try #require(pair.served.url)
    #expect(new != old)
    #expect(pair.onReplica("sync").code == 1)

    // Another log, at another address: refused, the old address kept.
    let other = Sandbox()
    _ = other.append("hello")
    let otherServed = try ServedLog.running(other)
    defer { _ = otherServed.stop() }
    let before = pair.replica.contents()
    let another = pair.onReplica("sync", "--remote", try #require(otherServed.url))
    #expect(another.code == 1 && another.stderr.contains("is not the log this replica was cloned from"), "\(another)")
    let unchanged = pair.replica.contents() == before
    #expect(unchanged, "the replica changed")
    #expect(pair.onReplica("status").stdout.hasPrefix("remote   \(old)\n"))

    let moved = pair.onReplica("sync", "--remote", new)
    #expect(moved.code == 0 && moved.stdout == "pushed 1 (0 rebased, 0 refused), pulled 1, at seq 3\n", "\(moved)")
    #expect(pair.onReplica("status").stdout.hasPrefix("remote   \(new)\n"))
    _ = pair.onReplica("append", "arrived")
    #expect(pair.onReplica("sync").code == 0)
    pair.expectInSync()
  }
}
