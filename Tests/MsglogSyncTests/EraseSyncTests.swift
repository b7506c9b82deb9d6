import Foundation
import Msglog
import MsglogTestSupport
import Synchronization
import Testing

#if canImport(Glibc)
  import Glibc
#endif

/// Erase across a replica (docs/SYNC.md, "Erased items"): a replica holding
/// an item's text offline blanks its own copy in the transaction that
/// pulls the erase; a pending change naming the erased item is refused
/// with its code; a replica cloned after the erase never holds the text.
@Suite(.serialized) struct EraseSyncTests {
  @Test func aReplicaBlanksItsCopyWhenItPullsTheErase() throws {
    let server = Sandbox()
    let secret = server.append("SENTINEL-SYNC", sender: "eve")
    let other = server.append("stays", sender: "ann")
    #expect(server.run("edit", secret, "SENTINEL-SYNC-EDITED").code == 0)
    let served = try ServedLog.running(server)
    defer { _ = served.stop() }
    let replica = Sandbox()
    var r = replica.run("clone", served.url!)
    #expect(r.code == 0, "\(r)")
    #expect(replica.export().contains("SENTINEL-SYNC"))
    // Offline: the replica edits the item the remote is about to erase.
    r = replica.run("edit", secret, "SENTINEL-PENDING")
    #expect(r.code == 0, "\(r)")
    r = server.run("erase", secret)
    #expect(r.code == 0 && r.stdout == "erased 1 item (2 events) at seq 4\n", "\(r)")
    r = replica.run("sync")
    #expect(r.code == 0 && r.stderr.contains("was refused"), "\(r)")
    // The replica purged itself after the pull: its files hold the text no more.
    func replicaFilesHolding(_ needle: String) -> [String] { filesHolding(needle, in: replica.db) }
    #expect(replicaFilesHolding("SENTINEL").isEmpty, "\(replicaFilesHolding("SENTINEL")) still hold it")
    #expect(r.stdout.split(separator: "\n").last?.hasPrefix("purged: ") == true, "\(r)")
    r = replica.run("status", "--json")
    #expect(r.stdout.contains(#""error":"item \#(secret) was erased at seq 4""#), "\(r)")
    #expect(replica.export() == server.export())
    #expect(!replica.export().contains("SENTINEL"))
    #expect(replica.run("list").stdout == "0  \(other.prefix(8))  ann  stays\n")
    r = replica.run("verify")
    #expect(r.code == 0, "\(r)")
    #expect(replica.run("verify").code == 0)
    // Cloned after the erase: never the text.
    let late = Sandbox()
    r = late.run("clone", served.url!)
    #expect(r.code == 0 && late.export() == server.export(), "\(r)")
    #expect(late.run("verify").code == 0)
    // A replica cannot erase itself: it is the remote's to do.
    r = replica.run("erase", other)
    #expect(r.code == 64 && r.stderr.hasPrefix("msglog: a replica cannot erase"), "\(r)")
  }

  /// A read on the replica holding a snapshot older than the pull
  /// (another process, here Python's LMDB) keeps the pages the pull
  /// freed: the sync is done all the same (exit 0) and says what stays,
  /// and the purge stays owed (the replica's `purge-owed` mark): the next
  /// sync pays it, though it pulls nothing, and a `purge` by hand pays it
  /// too. Without such a read, a sync that pulls an erase reports its
  /// purge (`--json`: `purged`).
  @Test func aReadHoldingOldPagesLeavesThePurgeOwed() throws {
    let server = Sandbox()
    let secret = server.append("SENTINEL-HELD", sender: "eve")
    let later = server.append("SENTINEL-LATER", sender: "eve")
    let last = server.append("SENTINEL-LAST", sender: "eve")
    server.append("stays", sender: "ann")
    let served = try ServedLog.running(server)
    defer { _ = served.stop() }
    let replica = Sandbox()
    #expect(replica.run("clone", served.url!).code == 0)
    /// Syncs after erasing `id` at the remote while a reader holds the replica's pages.
    func syncHeld(erasing id: String, seq: Int) {
      let read = HeldRead(of: replica)
      #expect(read.holding())
      #expect(server.run("erase", id).code == 0)
      let r = replica.run("sync")
      #expect(r.code == 0 && r.stdout == "pushed 0 (0 rebased, 0 refused), pulled 1, at seq \(seq)\n", "\(r)")
      #expect(
        r.stderr.contains("msglog: what the replica erased or trimmed stays in free pages an older read still holds"),
        "\(r)")
      #expect(r.stderr.contains("the next sync, or 'msglog purge', scrubs it once that read has ended"), "\(r)")
      #expect(read.release())
    }
    syncHeld(erasing: secret, seq: 5)
    #expect(!replica.export().contains("SENTINEL-HELD"))
    #expect(!filesHolding("SENTINEL-HELD", in: replica.db).isEmpty, "the read kept no page")
    #expect(replica.run("verify").code == 0, "a purge owed is no damage")
    // The next sync pulls nothing and pays the purge owed; the one after owes none.
    var r = replica.run("sync")
    #expect(r.code == 0 && r.stdout.hasPrefix("pushed 0 (0 rebased, 0 refused), pulled 0, at seq 5\npurged: "), "\(r)")
    #expect(filesHolding("SENTINEL-HELD", in: replica.db).isEmpty)
    r = replica.run("sync")
    #expect(r.code == 0 && r.stdout == "pushed 0 (0 rebased, 0 refused), pulled 0, at seq 5\n", "\(r)")
    // Paid by hand: the sync after owes none.
    syncHeld(erasing: later, seq: 6)
    #expect(replica.run("purge").code == 0)
    #expect(filesHolding("SENTINEL-LATER", in: replica.db).isEmpty)
    r = replica.run("sync")
    #expect(r.code == 0 && r.stdout == "pushed 0 (0 rebased, 0 refused), pulled 0, at seq 6\n", "\(r)")
    // No read in the way: the sync that pulls the erase purges.
    #expect(server.run("erase", last).code == 0)
    r = replica.run("--json", "sync")
    #expect(r.code == 0 && r.stdout.contains(#""pulled":1,"seq":7,"purged":"#), "\(r)")
    #expect(filesHolding("SENTINEL", in: replica.db).isEmpty, "\(filesHolding("SENTINEL", in: replica.db))")
    #expect(replica.run("verify").code == 0)
  }

  /// `kill -9` of a sync after it pulled an erase, at moments spread over
  /// its purge: the replica opens and verifies, and the next sync (which
  /// pulls nothing) pays what the killed one owed, so no file holds the
  /// text after it. A moment is the data file's `n`th change (the pull's
  /// pages, its meta page after their flush, the purge's commits and
  /// scrub, each a flush apart) and a wait after it.
  @Test func aSyncKilledInItsPurgeLeavesItOwed() throws {
    let server = Sandbox()
    // Other texts, for the purge (which reads the whole file) to take a while.
    let filler = String(repeating: "f", count: 200_000)
    let lines = (0..<30).map { #"{"op":"append","text":"\#($0) \#(filler)"}"# }.joined(separator: "\n")
    #expect(server.run(["import"], stdin: Data(lines.utf8)).code == 0)
    let moments: [(changes: Int, wait: useconds_t)] = [
      (1, 0), (2, 0), (2, 500), (3, 0), (3, 2_000), (4, 0), (1, 100_000),
    ]
    let sentinels = moments.indices.map { "SENTINEL-KILLED-\($0)-" + UUID().uuidString }
    let ids = sentinels.map { server.append($0 + String(repeating: "s", count: 50_000)) }
    let served = try ServedLog.running(server)
    defer { _ = served.stop() }
    let replica = Sandbox()
    #expect(replica.run("clone", served.url!).code == 0)
    let data = replica.db + "/data.mdb"
    func modified() -> timespec {
      var info = stat()
      stat(data, &info)
      return info.st_mtim
    }
    var outcomes: [String] = []
    for (n, moment) in moments.enumerated() {
      #expect(server.run("erase", ids[n]).code == 0)
      var seen = modified()
      let sync = replica.start(["sync"])
      var changes = 0
      let deadline = Date().addingTimeInterval(30)
      while changes < moment.changes && sync.process.isRunning && Date() < deadline {
        let now = modified()
        if now.tv_sec != seen.tv_sec || now.tv_nsec != seen.tv_nsec { (changes, seen) = (changes + 1, now) }
        usleep(50)
      }
      usleep(moment.wait)
      if sync.process.isRunning { kill(sync.process.processIdentifier, SIGKILL) }
      _ = sync.finish()
      let when = "killed \(moment.wait) µs after the data file's change \(moment.changes)"
      var r = replica.run("verify")
      #expect(r.code == 0, "\(when): \(r)")
      let held = !filesHolding(sentinels[n], in: replica.db).isEmpty
      let pulled = !replica.export().contains(sentinels[n])
      outcomes.append("\(when): \(pulled ? "pulled" : "not pulled"), \(held ? "text in the file" : "scrubbed")")
      r = replica.run("sync")
      #expect(r.code == 0, "\(when), then synced again: \(r)")
      // Pulled by this sync, or owed by the killed one: purged either way.
      #expect(!held || r.stdout.contains("\npurged: "), "\(when), then synced again: \(r)")
      #expect(filesHolding(sentinels[n], in: replica.db).isEmpty, "\(when), then synced again: \(r)")
      #expect(replica.export() == server.export())
    }
    // Some kill fell after the erase was pulled and before its text was
    // scrubbed: what this test is for.
    #expect(outcomes.contains { $0.hasSuffix(": pulled, text in the file") }, "\(outcomes)")
    let last = replica.run("sync")
    #expect(last.code == 0 && !last.stdout.contains("purged"), "nothing is owed any more: \(last)")
  }

  /// What a live sync's rounds reported, as they come, and the clock it
  /// reads, moved by hand.
  final class LiveRounds: Sendable {
    let reports = Mutex<[EventLog.SyncReport]>([])
    let ahead = Mutex<UInt64>(0)

    func now() -> Deadline {
      var now = Deadline.now()
      now.nanoseconds += ahead.withLock { $0 }
      return now
    }
  }

  /// A live sync (`sync --follow`, an app's `syncLive`) pays a purge owed
  /// at the end of its round; one a read kept from finishing it tries
  /// again only at its first round ten minutes after, not at every round,
  /// since each try reads the whole file. The clock is moved by hand.
  @Test func aLiveSyncTriesAHeldPurgeAgainOnlyAfterItsInterval() async throws {
    let server = Sandbox()
    let secret = server.append("SENTINEL-LIVE", sender: "eve")
    server.append("stays")
    let served = try ServedLog.running(server)
    defer { _ = served.stop() }
    let device = Sandbox()
    #expect(device.run("clone", served.url!).code == 0)
    let replica = try EventLog(device.db)
    let read = HeldRead(of: device)
    #expect(read.holding())

    let rounds = LiveRounds()
    var options = SyncOptions()
    options.clock = { rounds.now() }
    let moved = options
    let syncing = Task.detached {
      try await replica.syncLive(options: moved) { notice in
        if case .synced(let report) = notice { rounds.reports.withLock { $0.append(report) } }
      }
    }
    defer { syncing.cancel() }
    /// The first report after the `seen` first ones that pulled one event.
    func pulledOne(after seen: Int) async throws -> EventLog.SyncReport? {
      for _ in 0..<6_000 {
        if let found = rounds.reports.withLock({ $0.dropFirst(seen).first { $0.pulled == 1 } }) { return found }
        try await Task.sleep(for: .milliseconds(10))
      }
      return nil
    }

    // The round that pulls the erase cannot purge: the read holds the pages.
    #expect(server.run("erase", secret).code == 0)
    let held = try #require(try await pulledOne(after: 0))
    #expect(held.unpurged != nil && held.scrubbed == nil, "\(held)")
    #expect(read.release())

    // The next round, five minutes on, leaves the debt alone (its pull may
    // reuse the freed pages; only the report tells a purge tried). The ten
    // minutes count from the held round's start, not from the end of its
    // wait for this event (which the clock now puts five minutes later).
    rounds.ahead.withLock { $0 = EventLog.purgeRetry / 2 }
    var seen = rounds.reports.withLock { $0.count }
    server.append("next")
    let next = try #require(try await pulledOne(after: seen))
    #expect(next.scrubbed == nil && next.unpurged == nil, "a purge was tried at every round: \(next)")

    // Ten minutes on, the next round pays it.
    rounds.ahead.withLock { $0 = EventLog.purgeRetry }
    seen = rounds.reports.withLock { $0.count }
    server.append("after")
    let paid = try #require(try await pulledOne(after: seen))
    #expect(paid.scrubbed != nil && paid.unpurged == nil, "\(paid)")
    #expect(filesHolding("SENTINEL-LIVE", in: device.db).isEmpty)
    syncing.cancel()
    await #expect(throws: Never.self) { try await syncing.value }
  }

  /// A pull cut between the page holding a record the remote blanked and
  /// the page holding the erase that blanked it: the replica is sound
  /// (`verify` passes it; it said the log was damaged and to restore a
  /// backup), and the next sync brings the erase.
  @Test func aPullCutBeforeTheEraseLeavesASoundReplica() throws {
    let server = Sandbox()
    server.append("first")
    let served = try ServedLog.running(server)
    defer { _ = served.stop() }
    let proxy = FaultProxy(target: served.port)
    defer { proxy.stop() }
    let replica = Sandbox()
    #expect(replica.run("clone", proxy.url).code == 0)
    let secret = server.append("SENTINEL-CUT", sender: "eve")
    let lines = (0..<5_000).map { #"{"op":"append","text":"filler \#($0)"}"# }.joined(separator: "\n")
    #expect(server.run(["import"], stdin: Data(lines.utf8)).code == 0)
    var r = server.run("erase", secret)
    #expect(r.code == 0 && r.stdout.contains("at seq 5003"), "\(r)")
    // hello, the check, the first page (4,096 records, the blanked one
    // among them) pass; the second page, which holds the erase, is cut
    // (each time the sync asks for it again).
    proxy.next([.pass, .pass, .pass])
    proxy.always(.dropRequest)
    r = replica.run("sync")
    #expect(r.code == 1, "\(r)")
    proxy.always(nil)
    #expect(replica.run("status", "--json").stdout.contains(#""seq":4097"#), "\(proxy.history)")
    r = replica.run("verify")
    #expect(r.code == 0, "\(r)")
    #expect(replica.run("sync").code == 0)
    #expect(replica.export() == server.export())
    #expect(replica.run("verify").code == 0)
  }

  /// A clone owes no purge: it takes the remote's records as they are, an
  /// erased one blank already — also through the ledger (a trimmed
  /// remote's clone starts from its bases and takes the erase in as an
  /// event), whose erase would otherwise have left a purge owed for the
  /// first sync to pay.
  @Test func aCloneOwesNoPurge() throws {
    let server = Sandbox()
    let secret = server.append("SENTINEL-CLONE", sender: "eve")
    server.append("two")
    #expect(server.run("erase", secret).code == 0)
    server.append("four")
    #expect(server.run("trim", "--before", "2").code == 0)
    let served = try ServedLog.running(server)
    defer { _ = served.stop() }
    let replica = Sandbox()
    var r = replica.run("clone", served.url!)
    #expect(r.code == 0, "\(r)")
    #expect(filesHolding("SENTINEL", in: replica.db).isEmpty)
    r = replica.run("sync")
    #expect(r.code == 0 && r.stdout == "pushed 0 (0 rebased, 0 refused), pulled 0, at seq 4\n", "\(r)")
    #expect(replica.export() == server.export())
  }

  /// The remote erases the item at the replica's head, or takes a sender
  /// off the edit there (`erase --sender`). On PostgreSQL the record is
  /// whole and is written again framed, its checksum with it: the
  /// replica, which checks the remote's record at its head by that
  /// checksum, was told the remote "is not the log this replica was
  /// cloned from" until a reset. It now finds the record its own by its
  /// frame and syncs, its pending change with it.
  @Test(arguments: [Store.lmdb, .postgres], [false, true])
  func aRecordBlankedAtTheReplicasHeadIsStillTheReplicas(store: Store, unsign: Bool) throws {
    let server = Sandbox(store)
    let kept = server.append("kept", sender: "ann")
    let secret = server.append("SENTINEL-HEAD", sender: "eve")
    if unsign { #expect(server.run("edit", "--sender", "bob", kept, "kept, edited").code == 0) }
    let served = try ServedLog.running(server)
    defer { _ = served.stop() }
    let replica = Sandbox()
    #expect(replica.run("clone", served.url!).code == 0)
    #expect(replica.run("append", "offline").code == 0)
    var r = unsign ? server.run("erase", "--sender", "bob") : server.run("erase", secret)
    #expect(r.code == 0, "\(r)")
    r = replica.run("sync")
    // Rebased past an erased item, which no longer holds a place.
    #expect(r.code == 0 && r.stdout.hasPrefix("pushed 1 (\(unsign ? 0 : 1) rebased, 0 refused)"), "\(r)")
    #expect(replica.export() == server.export())
    #expect(server.run("list").stdout.hasSuffix("  offline\n"))
    #expect(replica.run("verify").code == 0)
    // The replica's head is the remote's record again: the next sync checks it as ever.
    r = replica.run("sync")
    #expect(r.code == 0 && r.stdout.hasPrefix("pushed 0 (0 rebased, 0 refused), pulled 0"), "\(r)")
  }

  /// What that fallback must not let through: the same log restored from
  /// an older copy, where another event took the replica's head seq and
  /// was erased — a framed record, marked erased, whose frame is not the
  /// replica's. The remote is another log, as ever, and nothing is taken in.
  @Test func anErasedRecordOfAnotherLogIsNotTheReplicas() throws {
    let server = Sandbox(.postgres)
    server.append("hello")
    let older = PostgresCluster.copyDatabase(try #require(server.databaseName))
    defer { PostgresCluster.dropDatabase(older.name) }
    server.append("mine")
    var served = try ServedLog.running(server)
    let replica = Sandbox()
    #expect(replica.run("clone", served.url!).code == 0)
    #expect(replica.run("append", "offline").code == 0)
    let port = served.port
    _ = served.stop()
    // The older copy, written to: another event at seq 2, erased.
    let other = server.run(["--db", older.url, "append", "theirs"], useDefaultDB: false).stdout
    let erased = server.run(
      ["--db", older.url, "erase", other.trimmingCharacters(in: .whitespacesAndNewlines)], useDefaultDB: false)
    #expect(erased.code == 0, "\(erased)")
    served = try ServedLog.running(server, ["--db", older.url], listen: "127.0.0.1:\(port)")
    defer { _ = served.stop() }
    let before = replica.contents()
    let r = replica.run("sync")
    #expect(r.code == 1 && r.stderr.contains("its event at seq 2 is not the replica's"), "\(r)")
    #expect(replica.contents() == before, "the replica changed")
  }

  /// An unsign keeps the text: an older copy holding another text for the
  /// same edit (the same item, version and time: an import of a changed
  /// line), then unsigned, is another log — the text is compared.
  @Test func anUnsignedEditWithAnotherTextIsNotTheReplicas() throws {
    let server = Sandbox(.postgres)
    let item = server.append("hello", sender: "ann")
    let older = PostgresCluster.copyDatabase(try #require(server.databaseName))
    defer { PostgresCluster.dropDatabase(older.name) }
    #expect(server.run("edit", "--sender", "bob", item, "bob's wording").code == 0)
    var served = try ServedLog.running(server)
    let replica = Sandbox()
    #expect(replica.run("clone", served.url!).code == 0)
    let port = served.port
    _ = served.stop()
    func onOlder(_ args: String..., stdin: String = "") -> Run {
      server.run(["--db", older.url] + args, stdin: Data(stdin.utf8), useDefaultDB: false)
    }
    let edit = try #require(replica.export().split(separator: "\n").last).replacing("bob's wording", with: "rewritten")
    var r = onOlder("import", stdin: edit + "\n")
    #expect(r.code == 0, "\(r)")
    r = onOlder("erase", "--sender", "bob")
    #expect(r.code == 0, "\(r)")
    served = try ServedLog.running(server, ["--db", older.url], listen: "127.0.0.1:\(port)")
    defer { _ = served.stop() }
    let before = replica.contents()
    r = replica.run("sync")
    #expect(r.code == 1 && r.stderr.contains("its event at seq 2 is not the replica's"), "\(r)")
    #expect(replica.contents() == before, "the replica changed")
  }
}
