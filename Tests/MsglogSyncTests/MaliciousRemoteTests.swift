import Foundation
import MsglogTestSupport
import Testing

#if canImport(Glibc)
  import Glibc
#endif

/// A replica against a remote that lies (Servers/lying_remote.py before a
/// real `msglog serve`; docs/SYNC.md, "Nothing a peer sends is trusted"):
/// each lie is refused as the remote's fault, naming the remote and the
/// seq, with nothing of it taken in and nothing pending dropped — and once
/// the remote tells the truth again, the next sync completes.
@Suite(.serialized) struct MaliciousRemoteTests {
  final class Setup {
    let server = Sandbox()
    let served: ServedLog
    let liar: LyingRemote
    let replica = Sandbox()

    init(items: [String] = ["hello", "world"]) throws {
      for text in items { _ = server.append(text) }
      served = try ServedLog.running(server)
      liar = try LyingRemote(server, target: served.port)
      let clone = replica.run(["clone", liar.url])
      try #require(clone.code == 0, "\(clone)")
    }

    deinit {
      liar.stop()
      _ = served.stop()
    }

    /// A sync that the lie makes fail: exit 1, nothing on stdout, the
    /// remote named as at fault (`blame`: what is said of it), the
    /// replica's files unchanged.
    func refusedSync(
      _ args: [String] = ["sync"], blame: String = "broke the sync protocol",
      sourceLocation: SourceLocation = #_sourceLocation
    ) -> Run {
      let before = replica.contents()
      let url = liar.url
      let run = replica.run(args)
      #expect(run.code == 1 && run.stdout.isEmpty, "\(run)", sourceLocation: sourceLocation)
      #expect(run.stderr.hasPrefix("msglog: \(url) \(blame): "), "\(run)", sourceLocation: sourceLocation)
      for wrong in ["corrupted", "restore", "may have committed"] {
        #expect(!run.stderr.contains(wrong), "\(run)", sourceLocation: sourceLocation)
      }
      let unchanged = replica.contents() == before
      #expect(unchanged, "the replica took something in", sourceLocation: sourceLocation)
      return run
    }

    /// Removes the replica's first item, offline: one pending change.
    func removeTheFirstItem(sourceLocation: SourceLocation = #_sourceLocation) throws {
      let list = replica.run(["list", "--json"]).stdout
      let id = try #require(list.firstMatch(of: /"id":"([0-9a-f-]{36})"/)?.1, sourceLocation: sourceLocation)
      #expect(replica.run(["remove", String(id)]).code == 0, sourceLocation: sourceLocation)
    }

    /// The truth again: a sync completes and the replica is the server's copy.
    func honestSyncEndsInSync(sourceLocation: SourceLocation = #_sourceLocation) {
      liar.lie("")
      let sync = replica.run(["sync"])
      #expect(sync.code == 0, "\(sync)", sourceLocation: sourceLocation)
      #expect(replica.export() == server.export(), sourceLocation: sourceLocation)
      #expect(replica.run(["status", "--json"]).stdout.contains(#""pending":0"#), sourceLocation: sourceLocation)
      #expect(replica.run(["verify"]).code == 0, sourceLocation: sourceLocation)
    }
  }

  /// "Unchanged" for an append, which always adds its item: believed, the
  /// message would be gone, neither pending nor refused nor anywhere. A
  /// copy of the replica numbering again gets that answer from an honest
  /// remote too, so it is lost track (`sync --reset` mends it), not a fault.
  @Test func anAppendAnsweredUnchangedStaysPending() throws {
    let setup = try Setup()
    #expect(setup.replica.run(["append", "kept"]).code == 0)
    setup.liar.lie("push-unchanged")
    let run = setup.replica.run(["sync"])
    #expect(run.code == 1, "\(run)")
    #expect(
      run.stderr.contains("change 1 of this replica adds an item, yet the remote answers that it changed nothing"),
      "\(run)")
    #expect(setup.replica.run(["status", "--json"]).stdout.contains(#""pending":1"#))
    setup.honestSyncEndsInSync()
    #expect(setup.server.run(["list"]).stdout.hasSuffix("  kept\n"))
  }

  /// A hello whose history begins past its head: no trim makes one, and a
  /// replica that believed it would start again from bases for ever.
  @Test func aHorizonPastTheHeadIsAFault() throws {
    let setup = try Setup()
    setup.liar.lie("hello-horizon 1000")
    let run = setup.refusedSync()
    #expect(run.stderr.contains("it says its history begins at seq 1000, past its head (seq 2)"), "\(run)")
    setup.honestSyncEndsInSync()
  }

  /// A push answer whose outcomes are in another order than the changes
  /// (each naming its own change): nothing of it is taken in. Before, the
  /// replica took them by place alone: an append's "applied" became an
  /// edit's, the edit's refusal the append's, kept for good — a refusal
  /// `status` listed for a change that was done, and a `verify` that
  /// failed ever after.
  @Test func outcomesOutOfOrderAreNotTakenIn() throws {
    let setup = try Setup()
    let list = setup.replica.run(["list", "--json"]).stdout
    let id = try #require(list.firstMatch(of: /"id":"([0-9a-f-]{36})"/)?.1)
    // The server removes the item the replica edits: the edit is refused there.
    #expect(setup.server.run(["remove", String(id)]).code == 0)
    #expect(setup.replica.run(["edit", String(id), "edited offline"]).code == 0)
    #expect(setup.replica.run(["append", "kept"]).code == 0)
    setup.liar.lie("push-reorder")
    let run = setup.refusedSync()
    #expect(run.stderr.contains("its push answer has the outcome of change 2 where change 1's was due"), "\(run)")
    setup.liar.lie("")
    let sync = setup.replica.run(["sync"])
    #expect(sync.code == 0, "\(sync)")
    #expect(setup.replica.export() == setup.server.export())
    let status = setup.replica.run(["status", "--json"]).stdout
    #expect(status.contains(#""pending":0"#) && status.contains(#""pending":1,"op":"edit""#), "\(status)")
    #expect(!status.contains(#""op":"append""#), "\(status)")
    #expect(setup.replica.run(["verify"]).code == 0)
  }

  /// Refusals from a remote that says it is behind the replica (it never
  /// saw the changes): not believed. Before, each change was dropped as
  /// done for good, and the honest remote then refused every later push
  /// as out of order.
  @Test func refusalsFromARemoteBehindTheReplicaAreNotBelieved() throws {
    let setup = try Setup()
    #expect(setup.replica.run(["append", "kept"]).code == 0)
    setup.liar.lie("push-refused-behind")
    let run = setup.refusedSync(blame: "is not the log this replica was cloned from")
    #expect(run.stderr.contains("its push answer says it is at seq 1, behind the replica (at seq 2)"), "\(run)")
    setup.honestSyncEndsInSync()
    #expect(setup.server.run(["list"]).stdout.hasSuffix("  kept\n"))
  }

  /// A trim claimed with bases that do not stand where the history is
  /// said to begin (one at another seq, or none at all): refused before
  /// anything is emptied. Before, the replica put its whole log in place of
  /// the lying base (or of nothing, asking again and again until its
  /// timeout) and, on that base, could then sync with no remote, not with
  /// `sync --reset`: for good.
  @Test(arguments: ["1", "none"])
  func basesThatDoNotStandAtTheHorizonAreRefused(base: String) throws {
    let setup = try Setup()
    setup.liar.lie("trim-lie 12 \(base)")
    let run = setup.refusedSync()
    #expect(
      run.stderr.contains(
        "it says its history begins at seq 12, yet sends " + (base == "none" ? "none" : "a base at seq 1")),
      "\(run)")
    #expect(setup.liar.requests.filter { $0.hasPrefix("GET /api/sync/bases") }.count == 1)
    setup.honestSyncEndsInSync()
  }

  /// Bases that stand where a lying remote says its history begins are
  /// taken (nothing here can show them false), but the honest remote,
  /// whose history goes on there, is not built on them: a sync says so
  /// (exit 1, not the log) and `sync --reset` starts the replica again from
  /// it, the change made meanwhile done once.
  @Test func basesALiarGaveAreNotBuiltOnAfterwards() throws {
    let setup = try Setup()
    setup.liar.lie("trim-lie 12 11")
    let lied = setup.replica.run(["sync"])
    #expect(lied.code == 1, "\(lied)")
    #expect(setup.replica.run(["append", "offline"]).code == 0)
    setup.liar.lie("")
    let honest = setup.replica.run(["sync"])
    #expect(
      honest.code == 1 && honest.stderr.contains("'msglog sync --reset' starts the replica again from it"),
      "\(honest)")
    let reset = setup.replica.run(["sync", "--reset"])
    #expect(reset.code == 0, "\(reset)")
    #expect(setup.replica.export() == setup.server.export())
    #expect(setup.server.run(["list"]).stdout.components(separatedBy: "offline").count == 2, "done once")
    #expect(setup.replica.run(["verify"]).code == 0)
  }

  /// "Applied, seq 1" for a pending remove that the server never saw: the
  /// event at seq 1 is not the change, so the change stays pending and the
  /// sync is a conflict (exit 1), never a silent drop.
  @Test func anOutcomeTheEventsDoNotBearOutIsAConflict() throws {
    let setup = try Setup()
    try setup.removeTheFirstItem()
    setup.liar.lie("push-applied 1")
    var run = setup.refusedSync()
    #expect(
      run.stderr.contains(
        "it says change 1 of this replica was applied as seq 1, but seq 1 was written on the remote itself"),
      "\(run)")
    #expect(run.stderr.contains("hint: change 1 stays pending"), "\(run)")
    #expect(setup.replica.run(["status", "--json"]).stdout.contains(#""pending":1"#))
    // A seq past the remote's head: borne out by nothing the pull brings.
    setup.liar.lie("push-applied 99")
    run = setup.refusedSync()
    #expect(run.stderr.contains("applied as seq 99, but the remote's head is seq 2"), "\(run)")
    setup.honestSyncEndsInSync()
    #expect(!setup.server.run(["list"]).stdout.contains("hello"))
  }

  /// "Applied, seq 3" for a pending append the server never saw, said to
  /// a replica behind a trimmed remote's horizon (4), which starts again
  /// from the bases: seq 3 went with the trim, but an item's id keeps its
  /// insert's seq for good and the bases hold no such item, so it is a
  /// conflict, the change still pending — never a silent drop.
  @Test func anInsertClaimedBeforeTheHorizonIsCheckedAgainstTheBases() throws {
    let setup = try Setup()
    #expect(setup.replica.run(["append", "offline"]).code == 0)
    for text in ["three", "four"] { _ = setup.server.append(text) }
    #expect(setup.server.run(["trim", "--before", "4"]).code == 0)
    setup.liar.lie("push-applied 3")
    let run = setup.replica.run(["sync"])
    #expect(
      run.code == 1
        && run.stderr.contains("it says change 1 of this replica was applied as seq 3, but its bases hold no item"),
      "\(run)")
    #expect(setup.replica.run(["status", "--json"]).stdout.contains(#""pending":1"#))
    setup.honestSyncEndsInSync()
    #expect(setup.server.run(["list"]).stdout.contains("offline"))
  }

  /// "Applied, seq 1" for a pending remove of a replica at a trimmed
  /// remote's horizon, which started again from nothing: no change of its
  /// can be before its history, so it is a conflict, not settled on the
  /// remote's word (that is for the changes pending when a replica behind
  /// the horizon starts again).
  @Test func aChangeClaimedBeforeTheReplicasHistoryIsAConflict() throws {
    let setup = try Setup()
    for text in ["three", "four"] { _ = setup.server.append(text) }
    #expect(setup.server.run(["trim", "--before", "3"]).code == 0)
    #expect(setup.replica.run(["sync"]).code == 0)
    try setup.removeTheFirstItem()
    setup.liar.lie("push-applied 1")
    let run = setup.refusedSync()
    #expect(
      run.stderr.contains(
        "it says change 1 of this replica was applied as seq 1, but history before seq 3 was trimmed before the change"),
      "\(run)")
    #expect(setup.replica.run(["status", "--json"]).stdout.contains(#""pending":1"#))
    setup.honestSyncEndsInSync()
  }

  /// Not a lie: a trim at the remote between a restart's hello and its
  /// bases. The bases taken are the newer horizon's, and a change the
  /// remote did below it is settled with them — not left to a later sync
  /// that would call the remote's true answer a lie, for good.
  @Test func aTrimDuringARestartMovesTheHorizonItSettlesBelow() throws {
    let setup = try Setup()
    for text in ["three", "four"] { _ = setup.server.append(text) }
    #expect(setup.server.run(["trim", "--before", "4"]).code == 0)
    #expect(setup.replica.run(["append", "offline"]).code == 0)
    setup.liar.lie("hold-bases 2")
    let sync = setup.replica.start(["sync"])
    var asked = false
    // A watchdog only: the bases are asked for at once.
    for _ in 0..<400 where !asked {
      asked = setup.liar.requests.contains { $0.hasPrefix("GET /api/sync/bases") }
      if !asked { usleep(10_000) }
    }
    #expect(asked, "\(setup.liar.requests)")
    // The offline append is seq 5 at the remote by now; the new horizon is past it.
    _ = setup.server.append("five")  // 6
    #expect(setup.server.run(["trim", "--before", "6"]).code == 0)
    let run = sync.finish()
    #expect(run.code == 0 && run.stdout.hasPrefix("pushed 1 ("), "\(run)")
    setup.liar.lie("")
    let again = setup.replica.run(["sync"])
    #expect(again.code == 0, "\(again)")
    #expect(setup.replica.run(["status", "--json"]).stdout.contains(#""pending":0,"refused":[]"#))
    #expect(setup.replica.export() == setup.server.export())
    #expect(setup.server.run(["log", "--all", "--json"]).lines.count == 1)  // seq 6 alone
  }

  /// A page that skips or repeats a seq: the remote's fault, named with
  /// the seq, not a corrupted local log to restore from a backup.
  @Test(arguments: [
    ("pull-skip", "it skipped from seq 3 to seq 5"), ("pull-duplicate", "it sent seq 3 again where seq 4 was due"),
  ])
  func aPageOutOfSeqIsTheRemotesFault(lie: String, words: String) throws {
    let setup = try Setup()
    for text in ["one", "two", "three"] { _ = setup.server.append(text) }
    setup.liar.lie(lie)
    let run = setup.refusedSync()
    #expect(run.stderr.contains(words) && run.stderr.contains("hint: nothing of that answer was taken in"), "\(run)")
    setup.honestSyncEndsInSync()
  }

  /// The same lies during a clone, whose pages are pulled one ahead of
  /// the build on a thread of their own (`PagesAhead`): refused as the
  /// remote's fault, naming the seq, nothing left where the clone was to
  /// be; the truth again, and the clone is the server's copy.
  @Test(arguments: [
    ("pull-skip", "it skipped from seq 1 to seq 3"),
    ("pull-duplicate", "it sent seq 1 again where seq 2 was due"),
    ("pull-head 9223372036854775807", "it says its head is seq 9223372036854775807 but sent nothing after seq 5"),
  ])
  func aCloneFromALiarLeavesNothing(lie: String, words: String) throws {
    let server = Sandbox()
    for text in ["one", "two", "three", "four", "five"] { _ = server.append(text) }
    let served = try ServedLog.running(server)
    defer { _ = served.stop() }
    let liar = try LyingRemote(server, target: served.port)
    defer { liar.stop() }
    liar.lie(lie)
    let replica = Sandbox()
    let run = replica.run(["clone", liar.url])
    #expect(run.code == 1 && run.stderr.contains(words), "\(run)")
    #expect(!FileManager.default.fileExists(atPath: replica.db), "the cut clone left \(replica.db)")
    liar.lie("")
    let clone = replica.run(["clone", liar.url])
    #expect(clone.code == 0, "\(clone)")
    #expect(replica.export() == server.export())
  }

  @Test func aRedirectIsRefusedAsARedirect() throws {
    let setup = try Setup()
    setup.liar.lie("redirect")
    let run = setup.refusedSync()
    #expect(
      run.stderr.contains("it answered 302, a redirect to http://elsewhere.example/, which sync does not follow")
        && run.stderr.contains("hint: if the log has moved there, 'msglog sync --remote URL'"), "\(run)")
    setup.honestSyncEndsInSync()
  }

  /// A head the pages do not bear out is refused, and never kept for
  /// `status` to show.
  @Test func aHeadNoPageBearsOutIsNeverKept() throws {
    let setup = try Setup()
    _ = setup.server.append("three")
    setup.liar.lie("pull-head 9223372036854775807")
    let run = setup.replica.run(["sync"])
    #expect(
      run.code == 1 && run.stderr.contains("it says its head is seq 9223372036854775807 but sent nothing after seq 3"),
      "\(run)")
    let status = setup.replica.run(["status"])
    #expect(status.stdout.contains("seq      3 (the remote's head was 3 when last seen)"), "\(status)")
    #expect(!status.stdout.contains("9223372036854775807"))
    setup.honestSyncEndsInSync()
  }

  /// The server's next two pages sent as one: more records, or more bytes,
  /// than a page may hold. Refused as they arrive, nothing taken in.
  @Test(arguments: ["records", "bytes"])
  func aPageBeyondTheProtocolsBoundsIsRefused(bound: String) throws {
    let setup = try Setup()
    if bound == "records" {
      let lines = (1...4100).map { "card \($0)" }.joined(separator: "\n") + "\n"
      #expect(setup.server.run(["append", "--lines"], stdin: Data(lines.utf8)).code == 0)
    } else {
      for letter in ["a", "b", "c"] {
        let text = Data(String(repeating: letter, count: 600_000).utf8)
        #expect(setup.server.run(["append"], stdin: text).code == 0)
      }
    }
    setup.liar.lie("pull-join")
    let run = setup.refusedSync()
    let words =
      bound == "records"
      ? "its pull answer ran past 4096 records, more than a page may hold"
      : "its pull answer ran past 1200140 bytes, more than a page may hold"  // two framed records of 600,070 bytes
    #expect(run.stderr.contains(words), "\(run)")
    setup.honestSyncEndsInSync()
  }

  /// Frames of 2 MiB as fast as the replica takes them (256 MiB in all):
  /// refused at the first, whose length no record can have, so the
  /// replica's memory stays small (it held every frame before checking any).
  @Test func aFloodOfBigFramesIsRefusedInLittleMemory() throws {
    let setup = try Setup()
    _ = setup.server.append("three")
    setup.liar.lie("flood 256")
    let (run, kilobytes) = runMeasuringMemory(setup.replica, ["--db", setup.replica.db, "sync"])
    #expect(
      run.code == 1 && run.stderr.contains("it sent a record of 2097152 bytes, more than any record can have"), "\(run)"
    )
    #expect(kilobytes > 0 && kilobytes < 64 * 1024, "peak RSS \(kilobytes) KiB")
    setup.honestSyncEndsInSync()
  }

  /// `sync --reset` syncs first under the old id; when that round's push
  /// was done and its pull then says "another log", the changes the remote
  /// applied are not numbered again under a new id (they would be done a
  /// second time): the failure is said, and the next sync settles them.
  @Test func aResetWhosePushWasDoneNumbersNothingAgain() throws {
    let setup = try Setup()
    _ = setup.replica.run(["append", "once"])
    #expect(setup.replica.run(["move", "0", "2"]).code == 0)
    setup.liar.lie("pull-another-log")
    let reset = setup.replica.run(["sync", "--reset"])
    #expect(reset.code == 1 && reset.stderr.contains("is not the log this replica was cloned from"), "\(reset)")
    setup.honestSyncEndsInSync()
    let server = setup.server.run(["log", "--json"]).stdout
    #expect(server.components(separatedBy: #""op":"move""#).count == 2, "\(server)")
    #expect(server.components(separatedBy: #""text":"once""#).count == 2, "\(server)")
    #expect(setup.replica.run(["status", "--json"]).stdout.contains(#""refused":[]"#))
  }

  /// A replica behind a trimmed horizon pushes under its id before it
  /// starts again; when a remote loses track of it after a first batch was
  /// applied (two batches: a long text goes alone), that batch's change is
  /// not numbered again under a new id — by the restart, nor by a reset
  /// whose first round under the old id this is: the failure is said, and
  /// the next sync settles it.
  @Test(arguments: [["sync"], ["sync", "--reset"]])
  func aRestartWhoseFirstBatchWasDoneNumbersNothingAgain(command: [String]) throws {
    let setup = try Setup()
    for text in ["c", "d"] { setup.server.append(text) }
    #expect(setup.server.run(["trim", "--before", "4"]).code == 0)
    let long = String(repeating: "long text ", count: 80_000)
    #expect(setup.replica.run(["append"], stdin: Data(long.utf8)).code == 0)
    #expect(setup.replica.run(["append", "small one"]).code == 0)
    setup.liar.lie("lose-track-after 1")
    let sync = setup.replica.run(command)
    #expect(sync.code == 1 && sync.stderr.contains("comes before change 1 was done"), "\(sync)")
    setup.honestSyncEndsInSync()
    let server = setup.server.run(["log", "--json"]).stdout
    #expect(server.split(separator: "\n").filter { $0.contains("long text") }.count == 1, "not once at the server")
    #expect(setup.replica.run(["status", "--json"]).stdout.contains(#""refused":[]"#))
  }
}
