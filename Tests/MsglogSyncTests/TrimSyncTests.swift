import Foundation
import MsglogTestSupport
import Testing

/// Trim across a replica (docs/SYNC.md, "A trimmed remote"): a clone of a
/// trimmed remote starts from its bases; a replica behind the remote's
/// horizon starts again from them under its own id, its pending changes
/// kept and pushed; a replica at or past it syncs as ever.
@Suite(.serialized) struct TrimSyncTests {
  /// A served log of four items (`ids`) on `store`, and a replica cloned
  /// through a FaultProxy, so that a test can cut its syncs.
  final class Proxied {
    let server: Sandbox
    let ids: [String]
    let served: ServedLog
    let proxy: FaultProxy
    let replica = Sandbox()

    init(_ store: Store = .lmdb) throws {
      server = Sandbox(store)
      ids = (1...4).map { [server] in server.append("s\($0)") }
      served = try ServedLog.running(server)
      proxy = FaultProxy(target: served.port)
      #expect(replica.run("clone", proxy.url).code == 0)
    }

    deinit {
      proxy.stop()
      _ = served.stop()
    }

    /// A sync whose first `passing` requests pass and the rest are dropped.
    func syncCut(after passing: Int) -> Run {
      proxy.next(Array(repeating: .pass, count: passing))
      proxy.always(.dropRequest)
      defer { proxy.always(.pass) }
      return replica.run("sync")
    }

    /// The last request that passed.
    var lastPassed: String? { proxy.history.filter { $0.fault == .pass }.last?.request }
  }

  /// The remote on either store: PostgreSQL's serves its bases as LMDB's does.
  @Test(arguments: Store.allCases)
  func aReplicaBehindTheHorizonResetsKeepingItsChanges(_ store: Store) throws {
    let server = Sandbox(store)
    let ids = (1...5).map { server.append("s\($0)") }
    #expect(server.run("edit", ids[1], "s2 edited").code == 0)  // 6
    let served = try ServedLog.running(server)
    defer { _ = served.stop() }
    let behind = Sandbox()
    var r = behind.run("clone", served.url!)
    #expect(r.code == 0, "\(r)")
    // Offline: a change the remote has not seen.
    #expect(behind.run("append", "from the replica").code == 0)
    #expect(server.run("remove", ids[0]).code == 0)  // 7
    server.append("s6")  // 8
    #expect(server.run("move", "0", "3").code == 0)  // 9
    r = server.run("trim", "--before", "9")
    #expect(r.code == 0 && r.stdout == "trimmed 8 events before seq 9\n", "\(r)")

    // The bases name m1, removed before the horizon, whose id stays used;
    // a replica from before such names does not ask for them (`retired=1`),
    // and gets the bases it can read.
    let logID = try RawSync.logID(of: served)
    let plain = served.request("GET", "/api/sync/bases?log=\(logID)")
    #expect(
      plain.status == 200 && plain.body.hasPrefix(#"{"op":"base""#) && !plain.body.contains("retired"), "\(plain)")
    let retiring = served.request("GET", "/api/sync/bases?log=\(logID)&retired=1")
    #expect(retiring.body.contains(#""retired":[{"id":"\#(ids[0])","seq":1,"removed":7}]"#), "\(retiring)")

    // A clone now starts from the bases.
    let late = Sandbox()
    r = late.run("clone", served.url!)
    #expect(r.code == 0, "\(r)")
    #expect(late.export() == server.export())
    #expect(late.run("list").stdout == server.run("list").stdout)
    #expect(late.run("replay", "--at", "8").stdout == server.run("replay", "--at", "8").stdout)
    #expect(late.run("verify").code == 0)

    // The replica at seq 6 is behind the horizon: it resets, then pushes.
    r = behind.run("sync")
    #expect(r.code == 0, "\(r)")
    #expect(r.stderr.contains("msglog: reset: history before seq 9 was trimmed at the remote"), "\(r)")
    #expect(r.stdout.hasPrefix("pushed 1 (0 rebased, 0 refused)"), "\(r)")
    // Its old copy, emptied to start again, is purged from its files.
    #expect(r.stdout.split(separator: "\n").last?.hasPrefix("purged: ") == true, "\(r)")
    #expect(behind.export() == server.export())
    #expect(server.run("list").stdout.contains("from the replica"))
    #expect(behind.run("verify").code == 0)
    // The late clone, at the horizon, syncs as ever.
    r = late.run("sync")
    #expect(r.code == 0 && !r.stderr.contains("reset"), "\(r)")
    #expect(late.export() == server.export())
    // Trimmed again, past what the replicas pushed: the remote still
    // verifies (an outcome keeps the seq of an event the trim took), and
    // a replica at or past the seq before the new horizon learns the trim
    // with its next sync: its history, and its export, are the remote's.
    #expect(late.run("append", "late's own").code == 0)
    #expect(late.run("sync").code == 0)
    #expect(behind.run("sync").code == 0)
    server.append("s7")  // the new horizon: both replicas are at the seq before it
    let horizon = String(Int(server.run("log", "--all", "--json").lines.count) + 8)
    r = server.run("trim", "--before", horizon)
    #expect(r.code == 0, "\(r)")
    r = server.run("verify")
    #expect(r.code == 0, "\(r)")
    r = server.run("verify", "--repair")
    #expect(r.code == 0, "\(r)")
    for replica in [late, behind] {
      #expect(replica.export() != server.export())
      r = replica.run("sync")
      #expect(r.code == 0 && !r.stderr.contains("reset"), "\(r)")
      // What the trim dropped is purged from the replica's files too.
      #expect(r.stdout.split(separator: "\n").last?.hasPrefix("purged: ") == true, "\(r)")
      #expect(replica.export() == server.export())
      #expect(replica.export().hasPrefix(#"{"op":"base","#))
      r = replica.run("replay", "--at", String(Int(horizon)! - 2))
      #expect(r.code == 1 && r.stderr.contains("history before seq \(horizon) was trimmed"), "\(r)")
      #expect(replica.run("verify").code == 0)
    }
    // A replica cannot trim: its history is its remote's. A dry run says
    // so too, rather than what the trim would have done.
    for dryRun in [[], ["--dry-run"]] {
      r = late.run(["trim", "--before", "10"] + dryRun)
      #expect(r.code == 1 && r.stderr.contains("is a replica: trim its remote's log") && r.stdout.isEmpty, "\(r)")
    }
  }

  /// A sync cut after its push was done, then a trim past what it pushed:
  /// the replica's next sync starts again from the bases, and the remote's
  /// kept outcomes settle what it did — nothing is pushed again (under a
  /// new id an insert came back refused as "already used", a remove as
  /// "history trimmed", and a move and its undo were done twice).
  @Test(arguments: Store.allCases)
  func aChangePushedBeforeATrimIsNotPushedAgain(_ store: Store) throws {
    let setup = try Proxied(store)
    defer { withExtendedLifetime(setup) {} }  // its server runs to the end
    let (server, ids, proxy, replica) = (setup.server, setup.ids, setup.proxy, setup.replica)
    // Offline: five changes, the last an undo of the first.
    let added = replica.run("append", "from the replica").stdout.trimmingCharacters(in: .whitespacesAndNewlines)
    #expect(replica.run("remove", ids[1]).code == 0)
    #expect(replica.run("edit", ids[2], "s3 edited").code == 0)
    #expect(replica.run("move", "0", "2").code == 0)
    #expect(replica.run("undo").code == 0)
    // The push is done and its answer read; the pull after it never arrives.
    var r = setup.syncCut(after: 3)
    #expect(r.code != 0, "\(r)")
    #expect(setup.lastPassed?.hasPrefix("POST /api/sync/push") == true, "\(proxy.history)")
    let doneAtServer = server.run("log", "--json").lines.count
    #expect(doneAtServer == 9, "\(server.run("log"))")
    server.append("s5")  // 10
    // The horizon falls among the pushed changes: the append, remove and
    // edit (5…7) went with the history; the move and its undo (8, 9) stay.
    r = server.run("trim", "--before", "8")
    #expect(r.code == 0, "\(r)")

    // A start again cut before the bases arrive (after its hello and the
    // push it makes first) changes nothing: the replica still shows its
    // list, not an empty one under its changes.
    let shown = replica.run("list").stdout
    #expect(shown.contains("from the replica") && shown.contains("s1"), "\(shown)")
    r = setup.syncCut(after: 2)
    #expect(r.code != 0, "\(r)")
    #expect(proxy.history.last?.request.hasPrefix("GET /api/sync/bases") == true, "\(proxy.history)")
    #expect(replica.run("list").stdout == shown)

    r = replica.run("sync")
    #expect(r.code == 0, "\(r)")
    #expect(r.stderr.contains("msglog: reset: history before seq 8 was trimmed at the remote"), "\(r)")
    #expect(r.stdout.hasPrefix("pushed 5 (0 rebased, 0 refused)"), "\(r)")
    // Nothing was done twice: the remote's log grew by no event of the replica's.
    #expect(server.run("log", "--all", "--json").lines.count == 3, "\(server.run("log", "--all"))")
    #expect(replica.export() == server.export())
    #expect(replica.run("status", "--json").stdout.contains(#""pending":0"#))
    #expect(replica.run("status", "--json").stdout.contains(#""refused":[]"#))
    #expect(server.run("list").stdout.contains("from the replica"))
    #expect(replica.run("list", "--json").stdout.contains(added))
    #expect(replica.run("verify").code == 0)
    #expect(server.run("verify").code == 0)
  }

  /// A remote restored from an older copy, then trimmed past the replica:
  /// it no longer holds what the replica pushed, so the replica's push
  /// under its own id is refused (a change out of order) before anything
  /// here is changed, and the replica starts again as `sync --reset` does,
  /// under a new id: its pending change lands, once. With nothing pending
  /// it takes a new id too, so that its next change is not out of order.
  @Test(arguments: [true, false]) func aRemoteRestoredFromAnOlderCopyAndTrimmed(pending: Bool) throws {
    let server = Sandbox()
    for i in 1...4 { server.append("s\(i)") }
    let copy = server.dir + "/older-copy"
    #expect(server.run("backup", copy).code == 0)
    var served = try ServedLog.running(server)
    let replica = Sandbox()
    #expect(replica.run("clone", served.url!).code == 0)
    #expect(replica.run("append", "r1").code == 0)
    #expect(replica.run("sync").code == 0)
    if pending { #expect(replica.run("append", "r2").code == 0) }
    // The older copy in the log's place, written to and trimmed.
    served = try served.restored(server, from: copy) {
      for i in 5...9 { server.append("b\(i)") }
      #expect(server.run("trim", "--before", "9").code == 0)
    }
    defer { _ = served.stop() }
    var r = replica.run("sync")
    #expect(r.code == 0 && r.stderr.contains("reset: history before seq 9 was trimmed"), "\(r)")
    #expect(r.stdout.hasPrefix(pending ? "pushed 1 (" : "pushed 0 ("), "\(r)")
    if !pending {
      #expect(replica.run("append", "r2").code == 0)
      r = replica.run("sync")
      #expect(r.code == 0 && r.stdout.hasPrefix("pushed 1 ("), "\(r)")
    }
    let list = server.run("list").stdout
    #expect(list.components(separatedBy: "  r2\n").count == 2 && !list.contains("r1"), "\(list)")
    #expect(replica.export() == server.export())
    #expect(replica.run("verify").code == 0)
  }

  /// A change the remote did with a rebase, whose answer the replica
  /// never learned, then trimmed below the horizon: the start again
  /// settles it from the remote's outcome and counts the rebase, as a
  /// pull of its event would have.
  @Test func aRebasedChangeSettledBelowTheHorizonIsCounted() throws {
    let setup = try Proxied()
    defer { withExtendedLifetime(setup) {} }  // its server runs to the end
    let (server, replica) = (setup.server, setup.replica)
    #expect(replica.run("insert", "1", "from the replica").code == 0)
    #expect(server.run("insert", "0", "s0").code == 0)  // 5: the replica's insert lands one further on
    #expect(setup.syncCut(after: 3).code != 0)
    #expect(setup.lastPassed?.hasPrefix("POST /api/sync/push") == true, "\(setup.proxy.history)")
    server.append("s5")  // 7
    #expect(server.run("trim", "--before", "7").code == 0)
    let r = replica.run("sync")
    #expect(r.code == 0 && r.stdout.hasPrefix("pushed 1 (1 rebased, 0 refused)"), "\(r)")
    #expect(replica.export() == server.export())
    #expect(
      server.run("list").lines.map { String($0.split(separator: " ").last!) } == [
        "s0", "s1", "replica", "s2", "s3", "s4", "s5",
      ])
  }

  /// The other side of that: a replica at the seq before the horizon of
  /// an older copy, restored, written to and trimmed there — its record at
  /// that seq, which the remote no longer checks, is another event. The
  /// bases, each stream's list at that seq, are compared instead: another
  /// log, nothing taken in (it was taken in without a word, and the two
  /// lists differed for good).
  @Test func aRestoredCopyTrimmedAtTheReplicasHeadIsAnotherLog() throws {
    let server = Sandbox()
    for i in 1...4 { server.append("base\(i)") }
    let copy = server.dir + "/older-copy"
    #expect(server.run("backup", copy).code == 0)
    var served = try ServedLog.running(server)
    let replica = Sandbox()
    #expect(replica.run("clone", served.url!).code == 0)
    #expect(replica.run("append", "from the replica").code == 0)
    #expect(replica.run("sync").code == 0)  // the replica at seq 5
    served = try served.restored(server, from: copy) {
      server.append("o5")
      server.append("o6")
      #expect(server.run("trim", "--before", "6").code == 0)
    }
    defer { _ = served.stop() }
    Self.expectListsDiffer(at: 5, syncing: replica)
  }

  /// The replica's sync finds the remote's bases, its lists at `seq`, not
  /// its own: another log, and the replica changes nothing.
  static func expectListsDiffer(
    at seq: UInt64, syncing replica: Sandbox, sourceLocation: SourceLocation = #_sourceLocation
  ) {
    let before = replica.contents()
    let r = replica.run("sync")
    #expect(
      r.code == 1 && r.stderr.contains("its lists at seq \(seq), before its history begins, are not the replica's"),
      "\(r)", sourceLocation: sourceLocation)
    let unchanged = replica.contents() == before
    #expect(unchanged, "the replica changed", sourceLocation: sourceLocation)
  }

  /// The same, where the older copy differs only by an edit's text: the
  /// same item edited at the same seq, to another text (or by another
  /// sender at another time). The bases' items are compared whole.
  @Test func aRestoredCopyWithAnotherEditAtTheReplicasHeadIsAnotherLog() throws {
    let server = Sandbox()
    let item = server.append("a")
    server.append("b")
    let copy = server.dir + "/older-copy"
    #expect(server.run("backup", copy).code == 0)
    #expect(server.run("edit", item, "foo").code == 0)  // 3
    var served = try ServedLog.running(server)
    let replica = Sandbox()
    #expect(replica.run("clone", served.url!).code == 0)
    served = try served.restored(server, from: copy) {
      #expect(server.run("edit", item, "bar").code == 0)  // 3, another text
      server.append("z")
      #expect(server.run("trim", "--before", "4").code == 0)
    }
    defer { _ = served.stop() }
    Self.expectListsDiffer(at: 3, syncing: replica)
  }

  /// An honest remote trimmed again between the hello and the bases the
  /// replica at H-1 compares: not another log — the sync ends saying the
  /// history moved on, and the next starts again from the new bases.
  @Test func aTrimBetweenTheHelloAndTheBasesIsNoOtherLog() throws {
    let server = Sandbox()
    for text in ["a", "b", "c"] { server.append(text) }
    let served = try ServedLog.running(server)
    defer { _ = served.stop() }
    let liar = try LyingRemote(server, target: served.port)
    defer { liar.stop() }
    let replica = Sandbox()
    #expect(replica.run("clone", liar.url).code == 0)  // at seq 3
    server.append("d")
    #expect(server.run("trim", "--before", "4").code == 0)
    liar.lie("hold-bases 2")
    let sync = replica.start(["sync"])
    usleep(800_000)
    server.append("e")
    server.append("f")
    #expect(server.run("trim", "--before", "6").code == 0)
    let cut = sync.finish()
    #expect(cut.code == 1 && cut.stderr.contains("history before seq 6 was trimmed"), "\(cut)")
    liar.lie("")
    let r = replica.run("sync")
    #expect(r.code == 0 && r.stderr.contains("reset: history before seq 6 was trimmed"), "\(r)")
    #expect(replica.export() == server.export())
  }

  /// A start again cut after it took the bases: the changes the remote did
  /// before the horizon were settled with them, in that transaction, and
  /// the next sync goes on as ever — nothing is left that only the cut
  /// round could have settled, nothing is done twice.
  @Test func aRestartCutAfterTheBasesGoesOnNextTime() throws {
    let setup = try Proxied()
    defer { withExtendedLifetime(setup) {} }  // its server runs to the end
    let (server, replica) = (setup.server, setup.replica)
    #expect(replica.run("append", "from the replica").code == 0)
    #expect(replica.run("remove", setup.ids[1]).code == 0)
    // The push is done; the pull after it never arrives.
    #expect(setup.syncCut(after: 3).code != 0)
    server.append("s5")  // 7
    #expect(server.run("trim", "--before", "7").code == 0)
    // Hello, the push made first, the bases: then cut.
    var r = setup.syncCut(after: 3)
    #expect(r.code != 0, "\(r)")
    #expect(setup.lastPassed?.hasPrefix("GET /api/sync/bases") == true)
    #expect(replica.run("status", "--json").stdout.contains(#""pending":0"#))
    r = replica.run("sync")
    #expect(r.code == 0, "\(r)")
    #expect(replica.run("status", "--json").stdout.contains(#""pending":0,"refused":[]"#))
    #expect(server.run("log", "--all", "--json").lines.count == 1)  // s5 alone: nothing done twice
    #expect(replica.export() == server.export())
    #expect(replica.run("verify").code == 0)
  }

  /// A replica at exactly the seq before the horizon, whose event there
  /// the trim dropped (a move: no base reads it): the remote makes no head
  /// check there, and the replica syncs as ever and learns the trim (it
  /// was told "not the log this replica was cloned from", for good).
  @Test(arguments: Store.allCases) func aReplicaAtTheSeqBeforeADroppedHorizon(_ store: Store) throws {
    let server = Sandbox(store)
    for text in ["a1", "a2"] { server.append(text) }
    #expect(server.run("move", "0", "1").code == 0)  // 3
    let served = try ServedLog.running(server)
    defer { _ = served.stop() }
    let replica = Sandbox()
    #expect(replica.run("clone", served.url!).code == 0)
    server.append("s4")
    #expect(server.run("trim", "--before", "4").code == 0)
    #expect(replica.run("append", "from the replica").code == 0)
    let r = replica.run("sync")
    #expect(r.code == 0 && !r.stderr.contains("reset"), "\(r)")
    #expect(replica.export() == server.export())
    #expect(replica.run("verify").code == 0)
  }

  /// `sync --follow` across a start again under a new id (nothing pending
  /// behind a trim done while the remote was away): each round reads the
  /// replica's id and secret afresh, so a change made after it lands
  /// under the new id (pushed under the old one, it was answered with the
  /// old id's change 1 and dropped, or misfiled).
  @Test func aFollowingSyncPushesUnderTheIdARestartGave() throws {
    let server = Sandbox()
    let first = server.append("a1")
    var served = try ServedLog.running(server)
    let port = served.port
    let replica = Sandbox()
    #expect(replica.run("clone", served.url!).code == 0)
    #expect(replica.run("edit", first, "same").code == 0)
    #expect(server.run("edit", first, "same").code == 0)
    #expect(replica.run("sync").code == 0)  // change 1: unchanged
    let follower = replica.start(["sync", "--follow"])
    defer {
      kill(follower.process.processIdentifier, SIGTERM)
      _ = follower.finish()
    }
    _ = served.stop()
    for i in 3...7 { server.append("s\(i)") }
    #expect(server.run("trim", "--before", "7").code == 0)
    served = try ServedLog.running(server, listen: "127.0.0.1:\(port)")
    defer { _ = served.stop() }
    // Its round after the start again ("reset: …" is on stderr).
    #expect(follower.waitForOutput("at seq 7\n", seconds: 60))
    #expect(replica.run("append", "important").code == 0)
    var landed = false
    // A watchdog only: the follower pushes as soon as the change is made.
    for _ in 0..<600 where !landed {
      landed = server.run("list").stdout.contains("important")
      if !landed { usleep(50_000) }
    }
    #expect(landed, "\(server.run("list"))")
    kill(follower.process.processIdentifier, SIGTERM)
    #expect(follower.finish().code == 0)
    #expect(replica.run("status", "--json").stdout.contains(#""pending":0,"refused":[]"#))
    #expect(replica.export() == server.export())
  }
}
