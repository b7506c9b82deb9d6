import Foundation
import Msglog
import MsglogTestSupport
import Testing

/// A replica proves it is itself (docs/SYNC.md, issue 34 item 2): its id is
/// public (every event's origin shows it), its secret is not; a push under
/// its id without that secret is refused (403) and changes nothing, so the
/// replica's own changes still land.
@Suite(.serialized) struct SyncSecretTests {
  /// The events made from `replica`'s changes at the server: change numbers.
  static func changes(of replica: String, in server: Sandbox) throws -> [Int] {
    try server.run(["log", "--json"]).stdout.split(separator: "\n").compactMap { line in
      let event = try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any]
      guard let origin = event?["origin"] as? [String: Any], origin["replica"] as? String == replica else { return nil }
      return origin["change"] as? Int
    }
  }

  /// Replica A syncs twice (changes 1, 2), then makes two more offline (3,
  /// 4). Someone pushes changes 3–7 under A's id — without a secret, with
  /// a made-up one: 403 each time, nothing appended, A's progress as it
  /// was. A's next sync pushes its own two (before: the forged push was
  /// applied, and A's sync said "pushed 5 …" and dropped its messages).
  @Test(arguments: Store.allCases)
  func aForgedPushIsRefusedAndTheReplicaKeepsItsChanges(store: Store) throws {
    let server = Sandbox(store)
    server.append("hello")
    let served = try ServedLog.running(server)
    defer { _ = served.stop() }
    let url = try #require(served.url)
    let a = Sandbox()
    #expect(a.run(["clone", url]).code == 0)
    a.append("one")
    a.append("two")
    #expect(a.run(["sync"]).code == 0)
    a.append("three (offline)")
    a.append("four (offline)")
    let replica = try #require(
      a.run(["status", "--verbose"]).lines.first { $0.hasPrefix("replica") }?.split(separator: " ").last.map(String.init))
    #expect(try Self.changes(of: replica, in: server) == [1, 2])
    // The secret is in no output a user or another client sees.
    let secret = try #require(try EventLog(a.db).replicaState()?.secret).hex
    for output in [
      a.run(["status", "--verbose", "--json"]).stdout, a.run(["status", "--verbose"]).stdout, a.export(),
      a.run(["log", "--json"]).stdout, server.export(), served.request("GET", "/api/events").body,
    ] {
      #expect(!output.contains(secret))
    }

    let before = server.export()
    let log = try RawSync.logID(of: served)
    let forged = (3...7).map { RawSync.append($0, text: "forged \($0)") }
    for secret in [nil, RawSync.newSecret()] {
      let reply = try RawSync.push(served, log: log, replica: replica, secret: secret, changes: forged)
      #expect(reply.status == 403, "\(reply)")
      #expect(reply.body.contains(#""kind":"replica-secret""#), "\(reply)")
    }
    #expect(server.export() == before, "nothing was done")

    let sync = a.run(["sync"])
    #expect(sync.code == 0 && sync.stdout.hasPrefix("pushed 2 (0 rebased, 0 refused)"), "\(sync)")
    #expect(try Self.changes(of: replica, in: server) == [1, 2, 3, 4])
    let texts = server.run(["list", "--json"]).stdout
    #expect(texts.contains("three (offline)") && texts.contains("four (offline)") && !texts.contains("forged"))
    #expect(a.export() == server.export())
    #expect(server.run(["verify"]).code == 0)
  }

  /// A replica restored from its own backup (or copied) numbers its
  /// changes again from where the backup was, under the same id and
  /// secret. Its next change under a number done already — an edit of
  /// the same item, or an append — is another change than the one done
  /// (made at another time): the push is refused whole, as lost track,
  /// where the edit used to get the first one's outcome and be dropped
  /// without a word, and the append stalled every sync and `--reset`.
  /// `sync --reset` then sends it under a new id: each change once.
  @Test(arguments: Store.allCases, [false, true])
  func aReplicaRestoredFromItsBackupIsToldAndResetsItself(store: Store, appends: Bool) throws {
    let server = Sandbox(store)
    let item = server.append("original")
    let served = try ServedLog.running(server)
    defer { _ = served.stop() }
    let replica = Sandbox()
    #expect(replica.run("clone", served.url!).code == 0)
    let backup = replica.dir + "/backup.lmdb"
    var r = replica.run("backup", backup)
    #expect(r.code == 0, "\(r)")
    func change(_ text: String) {
      let r = appends ? replica.run("append", text) : replica.run("edit", item, text)
      #expect(r.code == 0, "\(r)")
    }
    change("SENT-BEFORE-THE-RESTORE")
    r = replica.run("sync")
    #expect(r.code == 0 && r.stdout.hasPrefix("pushed 1 (0 rebased, 0 refused)"), "\(r)")
    // Restored from the backup: change 1 is next again.
    try FileManager.default.removeItem(atPath: replica.db)
    try FileManager.default.copyItem(atPath: backup, toPath: replica.db)
    change("MADE-AFTER-THE-RESTORE")
    let before = server.export()
    r = replica.run("sync")
    #expect(r.code == 1, "\(r)")
    #expect(r.stderr.contains("change 1 of this replica was done at seq 2 as another change"), "\(r)")
    #expect(r.stderr.contains("or this replica from a backup"), "\(r)")
    #expect(server.export() == before, "the refused push changed the server")
    #expect(replica.run("status", "--json").stdout.contains(#""pending":1"#))
    r = replica.run("sync", "--reset")
    // An append lands after the one sent before the restore: rebased.
    #expect(r.code == 0 && r.stdout.hasPrefix("pushed 1 (\(appends ? 1 : 0) rebased, 0 refused)"), "\(r)")
    let exported = server.export()
    #expect(exported.components(separatedBy: "SENT-BEFORE-THE-RESTORE").count == 2)
    #expect(exported.components(separatedBy: "MADE-AFTER-THE-RESTORE").count == 2)
    #expect(replica.export() == exported)
    #expect(replica.run("sync").code == 0)
    #expect(server.export() == exported)
  }

  /// A copy made while changes were pending: the original syncs them (and
  /// more: past one push's 256, and one more change), the copy makes its
  /// own next change. Its sync is refused as lost track, but pulls all the
  /// same, which settles the changes it shares with the original (the
  /// same changes, made at the same time); `sync --reset` then numbers
  /// again only its own. Before, the reset sent the shared ones a second
  /// time (an edit undoing the original's later edit), or, past 256, found
  /// the first push's changes awaiting their events and gave up for good.
  @Test(arguments: [1, 300])
  func aCopyWithChangesPendingLandsEachOnce(pending: Int) throws {
    let server = Sandbox()
    let item = server.append("original")
    let served = try ServedLog.running(server)
    defer { _ = served.stop() }
    let replica = Sandbox()
    #expect(replica.run("clone", served.url!).code == 0)
    if pending == 1 {
      #expect(replica.run("edit", item, "SHARED-V1").code == 0)
    } else {
      for n in 1...pending { #expect(replica.run("append", "SHARED-\(n)").code == 0) }
    }
    let copy = replica.dir + "/copy.lmdb"
    try FileManager.default.copyItem(atPath: replica.db, toPath: copy)
    #expect(replica.run("sync").code == 0)
    #expect(replica.run("edit", item, "ORIGINALS-V2").code == 0)
    #expect(replica.run("sync").code == 0)
    // The copy's own next change, under the number the original used.
    func onCopy(_ args: String...) -> Run { replica.run(["--db", copy] + args, useDefaultDB: false) }
    #expect(onCopy("append", "COPYS-OWN").code == 0)
    var r = onCopy("sync")
    #expect(r.code == 1 && r.stderr.contains("as another change, made at another time"), "\(r)")
    #expect(onCopy("status", "--json").stdout.contains(#""pending":1,"#), "the shared changes stay pending")
    r = onCopy("sync", "--reset")
    #expect(r.code == 0 && r.stdout.hasPrefix("pushed 1 ("), "\(r)")
    let exported = server.export()
    func count(_ text: String) -> Int { exported.components(separatedBy: "\"" + text + "\"").count - 1 }
    #expect(count("COPYS-OWN") == 1)
    if pending == 1 {
      #expect(count("SHARED-V1") == 1)
      #expect(server.run("list").stdout.contains("ORIGINALS-V2"), "the shared edit was done again")
    } else {
      #expect((1...pending).allSatisfy { count("SHARED-\($0)") == 1 })
    }
    #expect(server.run("verify").code == 0)
  }

  /// A replica whose id someone else claimed first is told so, exit 1,
  /// nothing pending lost; `sync --reset` gives it a new id and a new
  /// secret, and its changes land.
  @Test func aReplicaWhoseIdIsTakenIsToldAndResetsItself() throws {
    let server = Sandbox()
    server.append("hello")
    let served = try ServedLog.running(server)
    defer { _ = served.stop() }
    let url = try #require(served.url)
    let a = Sandbox()
    #expect(a.run(["clone", url]).code == 0)
    a.append("mine")
    let replica = try #require(
      a.run(["status", "--verbose"]).lines.first { $0.hasPrefix("replica") }?.split(separator: " ").last.map(String.init))
    // Someone claims A's id with a first push of their own.
    let taken = try RawSync.push(
      served, log: try RawSync.logID(of: served), replica: replica, secret: RawSync.newSecret(),
      changes: [RawSync.append(1, text: "theirs")])
    #expect(taken.status == 200, "\(taken)")

    let sync = a.run(["sync"])
    #expect(sync.code == 1, "\(sync)")
    #expect(sync.stderr.contains("the secret sent is not replica \(replica)'s"), "\(sync)")
    #expect(a.run(["status", "--json"]).stdout.contains(#""pending":1"#))
    let reset = a.run(["sync", "--reset"])
    #expect(reset.code == 0 && reset.stdout.hasPrefix("pushed 1 "), "\(reset)")
    #expect(server.run(["list"]).stdout.contains("mine"))
    #expect(a.export() == server.export())
  }

  /// The container format an LMDB database says it is in.
  static func format(of path: String) -> String {
    let script = """
      import lmdb, sys
      env = lmdb.open(sys.argv[1], max_dbs=16, readonly=True, lock=False)
      with env.begin() as txn:
          print(txn.get(b"format", db=env.open_db(b"meta", txn=txn, create=False)).decode())
      """
    return python(["-c", script, path]).stdout.trimmingCharacters(in: .whitespacesAndNewlines)
  }

  /// A replica cloned before replicas had secrets — its state without one,
  /// its database msglog/4 — whose id the server knows from its pushes then
  /// (a progress row of the first form): both still open and verify; its
  /// next sync makes it a secret, kept before it is sent, and that push
  /// claims its id (trust on first use); from then on a push under the id
  /// without it is refused.
  @Test func aReplicaFromBeforeSecretsClaimsItsIdAtItsNextSync() throws {
    let server = Sandbox()
    server.append("hello")
    let served = try ServedLog.running(server)
    defer { _ = served.stop() }
    let url = try #require(served.url)
    let a = Sandbox()
    #expect(a.run(["clone", url]).code == 0)
    a.append("before the upgrade")
    #expect(a.run(["sync"]).code == 0)
    #expect(Self.format(of: a.db) == "msglog/6" && Self.format(of: server.db) == "msglog/6")

    // What an older msglog left behind.
    var state = try #require(try EventLog(a.db).replicaState())
    state.secret = nil
    RawSync.putLMDB(a.db, table: "meta", key: SyncRows.replicaKey, value: SyncRows.encode(state))
    RawSync.putLMDB(a.db, table: "meta", key: Array("format".utf8), value: Array("msglog/4".utf8))
    RawSync.putLMDB(
      server.db, table: "replicas", key: state.replica.bytes,
      value: SyncRows.encode(ReplicaProgress(done: 1), of: state.replica))
    for sandbox in [a, server] {
      let verify = sandbox.run(["verify"])
      #expect(verify.code == 0, "\(verify)")
    }

    a.append("after the upgrade")
    let sync = a.run(["sync"])
    #expect(sync.code == 0 && sync.stdout.hasPrefix("pushed 1 "), "\(sync)")
    // Past msglog/5 (its secret): the framed record it pulled back from
    // the remote, a new database's, moves it on to msglog/6 (docs/FORMAT.md).
    #expect(Self.format(of: a.db) == "msglog/6")
    let secret = try #require(try EventLog(a.db).replicaState()?.secret)
    let kept = try #require(try EventLog(server.db).syncProgress(of: state.replica))
    #expect(kept.done == 2 && kept.secret?.matches(secret.digest) == true)
    let forged = try RawSync.push(
      served, log: try RawSync.logID(of: served), replica: state.replica.text, secret: RawSync.newSecret(),
      changes: [RawSync.append(3, text: "forged")])
    #expect(forged.status == 403, "\(forged)")
    #expect(a.export() == server.export())
  }
}
