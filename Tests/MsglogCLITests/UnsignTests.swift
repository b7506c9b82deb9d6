import Foundation
import MsglogTestSupport
import Testing

/// `erase --sender NAME` and the edits NAME made of others' items (SPEC
/// "Forgetting on purpose"; docs/REFERENCE.md, "Unsign"): each gets an
/// unsign event, and keeps its text while naming no sender, on LMDB and
/// PostgreSQL, through export and import, undo, a later erase of the item,
/// `verify`, a purge that leaves no byte of the name in any file, and a
/// replica that pulls it.
@Suite(.serialized) struct UnsignTests {
  /// A log where ann writes an item that eve edits, and eve writes one of
  /// her own that she edits too: what `erase --sender eve` unsigns and erases.
  private func logWithEditsByEve(_ s: Sandbox, _ eve: String) -> (ann: String, own: String) {
    let ann = s.append("ann's words", sender: "ann")
    #expect(s.run("edit", ann, "--sender", eve, "ann's words, fixed").code == 0)
    let own = s.append("eve's own", sender: eve)
    #expect(s.run("edit", own, "--sender", eve, "eve's own, again").code == 0)
    return (ann, own)
  }

  @Test(arguments: Store.allCases)
  func theSendersEditsOfOthersItemsKeepTheirTextAndNameNobody(_ store: Store) throws {
    let s = Sandbox(store)
    let eve = "eve-SENTINEL-" + UUID().uuidString.prefix(8)
    let (ann, own) = logWithEditsByEve(s, eve)
    var r = s.run("erase", "--sender", eve, "--json")
    // The own item's insert and edit blanked, ann's item's edit unsigned: 3 events, the unsign last at seq 6.
    #expect(r.code == 0 && r.stdout == #"{"erased":["\#(own)"],"events":3,"seq":6}"# + "\n", "\(r)")
    r = s.run("log", "--json", "--from", "2")
    let lines = r.stdout.split(separator: "\n").map { maskingTimes(String($0)) }
    #expect(lines.first == #"{"seq":2,"stream":"main","version":2,"time":"TIME","op":"edit","id":"\#(ann)","text":"ann's words, fixed","erased":6}"#, "\(r)")
    #expect(lines.last == #"{"seq":6,"stream":"main","version":6,"time":"TIME","op":"unsign","id":"\#(ann)","edit":2}"#, "\(r)")
    r = s.run("log", "--from", "6")
    #expect(r.stdout.hasSuffix("  main  v6  unsign  \(ann)  edit 2\n"), "\(r)")
    #expect(s.run("log", "--from", "2").stdout.contains("  edit  \(ann)  [erased]  ann's words, fixed\n"))
    // The list: ann's item with its text, written by ann.
    r = s.run("list")
    #expect(r.stdout == "0  \(ann.prefix(8))  ann  ann's words, fixed\n", "\(r)")
    let export = s.export()
    #expect(!export.contains(eve) && export.contains("ann's words, fixed"), "\(export)")
    #expect(s.run("verify").code == 0)
    // Again: nothing left to do.
    r = s.run("erase", "--sender", eve)
    #expect(r.code == 0 && r.stdout.isEmpty && r.stderr.hasPrefix("msglog: nothing to erase"), "\(r)")

    // export | import | export: byte for byte, into a new database of the same store.
    let copy = Sandbox(store)
    r = copy.run(["import"], stdin: Data(export.utf8))
    #expect(r.code == 0, "\(r)")
    #expect(copy.export() == export)
    #expect(copy.run("verify").code == 0)

    // An unsign is not undone (the sender does not come back), and an undo
    // without a seq passes over it.
    r = s.run("undo", "6")
    #expect(r.code == 0 && !s.export().contains(eve), "\(r)")
    // Erasing ann's item later blanks the unsigned edit too.
    r = s.run("erase", ann)
    #expect(r.code == 0 && r.stdout == "erased 1 item (2 events) at seq 7\n", "\(r)")
    let erased = s.export()
    #expect(!erased.contains("fixed"))
    r = s.run("verify")
    #expect(r.code == 0 && r.stdout.hasPrefix("ok"), "\(r)")
    // An edit unsigned, then erased with its item: its import still takes the unsign in.
    let again = Sandbox(store)
    r = again.run(["import"], stdin: Data(erased.utf8))
    #expect(r.code == 0 && again.export() == erased, "\(r)")
    #expect(again.run("verify").code == 0)
    // `verify --repair` rebuilds what it derives from the events, unsigns among them.
    if store == .lmdb {
      r = python([
        "-c",
        "import lmdb,sys; e=lmdb.open(sys.argv[1],max_dbs=16); d=e.open_db(b'heads'); t=e.begin(write=True,db=d); t.delete(b'main'); t.commit()",
        again.db,
      ])
      #expect(r.code == 0 && again.run("verify").code == 1, "\(r)")
      r = again.run("verify", "--repair")
      #expect(r.code == 0 && again.run("verify").code == 0 && again.export() == erased, "\(r)")
    }
  }

  /// The first unsign moves a database on (msglog/10, PostgreSQL schema 8):
  /// an older msglog cannot read an unsigned edit, so it refuses the log.
  @Test(arguments: Store.allCases)
  func theFirstUnsignMovesTheFormatOn(_ store: Store) throws {
    let s = Sandbox(store)
    let ann = s.append("ann's words", sender: "ann")
    #expect(s.run("edit", ann, "--sender", "bob", "ann's words, fixed").code == 0)
    #expect(s.run("erase", "--sender", "bob").code == 0)
    switch store {
    case .lmdb:
      let inspect = """
        import lmdb, sys
        env = lmdb.open(sys.argv[1], max_dbs=16, readonly=True, lock=False)
        meta, events = env.open_db(b"meta", create=False), env.open_db(b"events", create=False)
        with env.begin() as txn:
            print(txn.get(b"format", db=meta).decode(), [bytes(v)[0] for _, v in txn.cursor(db=events)])
        """
      let r = python(["-c", inspect, s.db])
      #expect(r.stdout == "msglog/10 [4, 4, 6]\n", "\(r)")
    case .postgres:
      let name = String(s.db.split(separator: "/").last!)
      let r = PostgresCluster.psql(
        "SELECT convert_from(value, 'UTF8') FROM msglog.meta WHERE key = 'schema'", database: name)
      #expect(r.stdout == "8\n", "\(r)")
    }
    #expect(s.run("verify").code == 0)
  }

  /// After a purge no file of the database holds the sender's name, while
  /// the texts of their edits of others' items stay.
  @Test func purgeLeavesNoByteOfTheName() throws {
    let s = Sandbox()
    let eve = "eve-SENTINEL-" + UUID().uuidString
    let filler = (0..<300).map { "filler \($0)" }.joined(separator: "\n")
    #expect(s.run(["append", "--lines", "--sender", "ann"], stdin: Data(filler.utf8)).code == 0)
    _ = logWithEditsByEve(s, eve)
    #expect(s.run(["append", "--lines", "--sender", "ann"], stdin: Data(filler.utf8)).code == 0)
    #expect(s.run("erase", "--sender", eve).code == 0)
    // The edits' old pages still hold the name: the test can fail.
    #expect(FileManager.default.contents(atPath: s.db + "/data.mdb")?.range(of: Data(eve.utf8)) != nil)
    var r = s.run("purge")
    #expect(r.code == 0, "\(r)")
    let files = (try? FileManager.default.contentsOfDirectory(atPath: s.db)) ?? []
    for name in files {
      let bytes = FileManager.default.contents(atPath: s.db + "/" + name) ?? Data()
      #expect(bytes.range(of: Data(eve.utf8)) == nil, "\(name) still holds the name")
    }
    r = s.run("list")
    #expect(r.stdout.contains("ann's words, fixed"), "\(r)")
  }

  /// A replica that cloned the edit with its sender takes the sender off
  /// in the sync that pulls the unsign; after its own purge no file of it
  /// holds the name.
  @Test func aReplicaUnsignsItsCopyWhenItPullsTheUnsign() throws {
    let server = Sandbox()
    let eve = "eve-SENTINEL-" + UUID().uuidString
    let (ann, _) = logWithEditsByEve(server, eve)
    let served = try ServedLog.running(server)
    defer { _ = served.stop() }
    let replica = Sandbox()
    var r = replica.run("clone", served.url!)
    #expect(r.code == 0 && replica.export().contains(eve), "\(r)")
    r = server.run("erase", "--sender", eve)
    #expect(r.code == 0, "\(r)")
    r = replica.run("sync")
    #expect(r.code == 0, "\(r)")
    #expect(replica.export() == server.export())
    #expect(!replica.export().contains(eve))
    #expect(replica.run("list").stdout == "0  \(ann.prefix(8))  ann  ann's words, fixed\n")
    #expect(replica.run("verify").code == 0)
    r = replica.run("purge")
    #expect(r.code == 0, "\(r)")
    let files = (try? FileManager.default.contentsOfDirectory(atPath: replica.db)) ?? []
    #expect(!files.isEmpty)
    for name in files {
      let bytes = FileManager.default.contents(atPath: replica.db + "/" + name) ?? Data()
      #expect(bytes.range(of: Data(eve.utf8)) == nil, "\(name) still holds the name")
    }
  }

  /// In a trimmed log the sender's item and edit may live on only in the
  /// records a base kept: `erase --sender` reaches them too, the export
  /// round trip holds, and a purge leaves no byte of the name or the text.
  @Test func eraseBySenderReachesWhatATrimKept() throws {
    let s = Sandbox()
    let eve = "eve-SENTINEL-" + UUID().uuidString
    let secret = "SECRET-" + UUID().uuidString
    let ann = s.append("ann's words", sender: "ann")
    #expect(s.run("edit", ann, "--sender", eve, "ann's words, fixed").code == 0)
    _ = s.append(secret, sender: eve)
    for i in 1...3 { _ = s.append("bob \(i)", sender: "bob") }
    var r = s.run("trim", "--before", "5")
    #expect(r.code == 0, "\(r)")
    r = s.run("erase", "--sender", eve)
    #expect(r.code == 0 && r.stdout == "erased 1 item (2 events) at seq 8\n", "\(r)")
    let export = s.export()
    #expect(!export.contains(eve) && !export.contains(secret) && export.contains(#""op":"unsign""#), "\(export)")
    #expect(s.run("verify").code == 0)
    let copy = Sandbox()
    r = copy.run(["import"], stdin: Data(export.utf8))
    #expect(r.code == 0 && copy.export() == export, "\(r)")
    #expect(copy.run("verify").code == 0)
    #expect(s.run("purge").code == 0)
    let files = (try? FileManager.default.contentsOfDirectory(atPath: s.db)) ?? []
    for name in files {
      let bytes = FileManager.default.contents(atPath: s.db + "/" + name) ?? Data()
      #expect(bytes.range(of: Data(eve.utf8)) == nil && bytes.range(of: Data(secret.utf8)) == nil, "\(name)")
    }
    #expect(s.run("list").stdout.hasPrefix("0  \(ann.prefix(8))  ann  ann's words, fixed\n"))
  }
}
