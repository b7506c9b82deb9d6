import Foundation
import Msglog
import MsglogTestSupport
import Testing

/// A refused change's reason is kept and sent as a code with its data,
/// never as words (docs/SYNC.md, "A refused change"): what a remote keeps
/// in its outcomes, what it answers, and what a replica keeps of it. What
/// an older msglog kept in words stays readable, on both stores: a
/// remote's outcome resent with its words, a replica's refusal listed.
@Suite(.serialized) struct RefusalCodeTests {
  static let gone = "dddddddd-dddd-4ddd-8ddd-dddddddddddd"
  static let words = "no item with id \(gone) in stream 'main'"

  /// A push of one change that is refused (its item never was), under a fresh replica.
  struct RefusedPush {
    let served: ServedLog
    let log: String
    let replica = UUID().uuidString.lowercased()
    let secret = RawSync.newSecret()
    let change = RawSync.remove(1, id: RefusalCodeTests.gone)

    func send() throws -> ServedLog.Reply {
      try RawSync.push(served, log: log, replica: replica, secret: secret, changes: [change])
    }
  }

  @Test(arguments: Store.allCases) func aRefusalIsKeptAndSentAsItsCode(store: Store) throws {
    let server = Sandbox(store)
    server.append("hello")
    let served = try ServedLog.running(server)
    defer { _ = served.stop() }
    let push = RefusedPush(served: served, log: try RawSync.logID(of: served))
    let answer = try push.send()
    #expect(answer.status == 200, "\(answer)")
    #expect(
      answer.body.contains(
        #"{"change":1,"result":"refused","reason":{"code":"no-such-item","id":"\#(Self.gone)","stream":"main"},"error":"\#(Self.words)"}"#
      ),
      "\(answer)")
    // Kept as the code: read back as the very error, not as words.
    let id = try #require(ItemID(canonical: push.replica))
    let kept = try EventLog(server.db).syncOutcomes(of: id)
    #expect(kept.count == 1 && kept[0].0 == 1)
    #expect(kept[0].1 == .refused(.error(.noSuchItem(ItemID(canonical: Self.gone)!, stream: "main"))))
    let row = try Self.outcomeRow(server, replica: id, change: 1)
    #expect(
      String(decoding: row.dropFirst(5).dropLast(4), as: UTF8.self)
        == #"{"code":"no-such-item","id":"\#(Self.gone)","stream":"main"}"#)
  }

  /// A refusal a remote sends as its code over HTTP is read by the
  /// replica as that code, not as the words beside it: the sync's report
  /// and the replica's status hold the very error, its data to switch on,
  /// whichever store the remote keeps its log in.
  @Test(arguments: Store.allCases) func aRefusalSentAsItsCodeIsReadAsItByTheReplica(store: Store) throws {
    let server = Sandbox(store)
    server.append("hello")
    let served = try ServedLog.running(server)
    defer { _ = served.stop() }
    let replica = Sandbox()
    #expect(replica.run(["clone", try #require(served.url)]).code == 0)
    let text = try #require(server.run(["list", "--json"]).stdout.firstMatch(of: /"id":"([0-9a-f-]{36})"/)?.1)
    let id = try #require(ItemID(canonical: String(text)))
    #expect(replica.run(["remove", id.text]).code == 0)
    #expect(server.run(["remove", id.text]).code == 0)
    let reason = ChangeRefusal.error(.itemRemoved(id, removeSeq: 2))
    let log = try EventLog(replica.db)
    let report = try log.sync()
    #expect(report.refused.map(\.reason) == [reason], "\(report)")
    #expect(try log.replicaStatus().refused.map(\.reason) == [reason])
    #expect(report.refused.first?.error == "item \(id.text) was already removed (at seq 2)")
  }

  /// An outcome an older msglog kept in words — the row planted as it
  /// wrote it — is answered again with those words alone (no code to
  /// give), `verify` passes, and the log reads it as words.
  @Test(arguments: Store.allCases) func anOutcomeKeptInWordsIsAnsweredWithThem(store: Store) throws {
    let server = Sandbox(store)
    server.append("hello")
    let served = try ServedLog.running(server)
    defer { _ = served.stop() }
    let push = RefusedPush(served: served, log: try RawSync.logID(of: served))
    #expect(try push.send().status == 200)
    let id = try #require(ItemID(canonical: push.replica))
    let older = "no item with id \(Self.gone) in stream 'main' (in an older msglog's words)"
    try Self.putOutcomeRow(server, replica: id, change: 1, .refused(.unknown(code: nil, words: older)))

    let again = try push.send()
    #expect(again.status == 200, "\(again)")
    #expect(again.body == #"{"head":1,"outcomes":[{"change":1,"result":"refused","error":"\#(older)"}]}"#, "\(again)")
    #expect(try EventLog(server.db).syncOutcomes(of: id).map(\.1) == [.refused(.unknown(code: nil, words: older))])
    let verify = server.run(["verify"])
    #expect(verify.code == 0, "\(verify)")
  }

  /// A replica's refusal and learned outcome kept in words by an older
  /// msglog (the rows planted as it wrote them) are listed as they were,
  /// `status` printing the very bytes it printed of the coded ones, and
  /// `status --clear` and the next sync go on.
  @Test func aReplicasRefusalKeptInWordsIsListedAsBefore() throws {
    let server = Sandbox()
    server.append("hello")
    let served = try ServedLog.running(server)
    defer { _ = served.stop() }
    let replica = Sandbox()
    #expect(replica.run(["clone", try #require(served.url)]).code == 0)
    let id = try #require(server.run(["list", "--json"]).stdout.firstMatch(of: /"id":"([0-9a-f-]{36})"/)?.1).description
    #expect(replica.run(["remove", id]).code == 0)
    #expect(server.run(["remove", id]).code == 0)
    let sync = replica.run(["sync"])
    #expect(sync.code == 0 && sync.stdout.hasPrefix("pushed 1 (0 rebased, 1 refused)"), "\(sync)")
    let words = "item \(id) was already removed (at seq 2)"
    #expect(sync.stderr == "msglog: change 1 (remove in 'main') was refused: \(words)\n", "\(sync)")
    let text = replica.run(["status"]).stdout
    let json = replica.run(["status", "--json"]).stdout
    #expect(
      text.contains("  change 1  remove  main  \(words)\n") && json.contains(#""error":"\#(words)"}"#), "\(text)\(json)"
    )

    let key = [UInt8](bigEndian: UInt64(1))
    let row = #"{"pending":1,"op":"remove","stream":"main","error":"\#(words)"}"#
    RawSync.putLMDB(
      replica.db, table: "refused", key: key, value: SyncRows.sealJSON(Array(row.utf8), .refused, change: 1))
    let learned = SyncRows.encode(.refused(.unknown(code: nil, words: words)), .learned, key: key)
    RawSync.putLMDB(replica.db, table: "learned", key: key, value: learned)
    #expect(replica.run(["status"]).stdout == text)
    #expect(replica.run(["status", "--json"]).stdout == json)
    #expect(replica.run(["verify"]).code == 0)
    #expect(replica.run(["status", "--clear"]).code == 0)
    replica.append("after")
    let next = replica.run(["sync"])
    #expect(next.code == 0 && next.stdout.hasPrefix("pushed 1 (0 rebased, 0 refused)"), "\(next)")
    #expect(replica.export() == server.export())
  }

  // MARK: - Rows behind msglog's back

  /// The `sync-outcomes` row of `replica`'s `change`, as stored.
  static func outcomeRow(_ s: Sandbox, replica: ItemID, change: UInt64) throws -> [UInt8] {
    let key = SyncRows.outcomeKey(change, by: replica)
    switch s.store {
    case .lmdb:
      let script = """
        import lmdb, sys
        env = lmdb.open(sys.argv[1], max_dbs=16, readonly=True, lock=False)
        with env.begin(db=env.open_db(b"sync-outcomes", create=False)) as txn:
            print(txn.get(bytes.fromhex(sys.argv[2])).hex())
        """
      let run = python(["-c", script, s.db, RawSync.hex(key)])
      #expect(run.code == 0, "\(run)")
      return try #require(Hex.bytes(run.stdout.trimmingCharacters(in: .whitespacesAndNewlines).utf8))
    case .postgres:
      let run = PostgresCluster.psql(
        "SELECT encode(outcome, 'hex') FROM msglog.sync_outcomes WHERE replica = '\(replica.text)' AND change = \(change)",
        database: s.databaseName!)
      #expect(run.code == 0, "\(run)")
      return try #require(Hex.bytes(run.stdout.trimmingCharacters(in: .whitespacesAndNewlines).utf8))
    }
  }

  /// Writes `outcome` as the `sync-outcomes` row of `replica`'s `change`,
  /// behind msglog's back (a reason in words: as an older msglog wrote it).
  static func putOutcomeRow(_ s: Sandbox, replica: ItemID, change: UInt64, _ outcome: ChangeOutcome) throws {
    let key = SyncRows.outcomeKey(change, by: replica)
    let row = SyncRows.encode(outcome, .syncOutcomes, key: key)
    switch s.store {
    case .lmdb:
      RawSync.putLMDB(s.db, table: "sync-outcomes", key: key, value: row)
    case .postgres:
      let run = PostgresCluster.psql(
        "UPDATE msglog.sync_outcomes SET outcome = '\\x\(RawSync.hex(row))' WHERE replica = '\(replica.text)' AND change = \(change) RETURNING change",
        database: s.databaseName!)
      #expect(run.code == 0 && run.stdout == "\(change)\n", "\(run)")
    }
  }
}
