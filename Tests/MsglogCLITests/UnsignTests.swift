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
    #expect(
      lines.first
        == #"{"seq":2,"stream":"main","version":2,"time":"TIME","op":"edit","id":"\#(ann)","text":"ann's words, fixed","erased":6}"#,
      "\(r)")
    #expect(
      lines.last == #"{"seq":6,"stream":"main","version":6,"time":"TIME","op":"unsign","id":"\#(ann)","edit":2}"#,
      "\(r)")
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

    // An unsign is not undone: the sender does not come back.
    r = s.run("undo", "6")
    #expect(r.code == 0 && r.stdout.isEmpty && r.stderr.contains("changes nothing"), "\(r)")
    #expect(!s.export().contains(eve))
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
      r = deleteHeadsRow(in: again.db)
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
      let r = lmdbFormats(of: s.db)
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

  /// A sender with edits only: what was done is said (no "nothing to
  /// erase"), a short name (the unsigned body is longer than the signed
  /// one) goes through purge, and a plain `undo` passes over the unsign.
  @Test func aSenderWithEditsOnly() throws {
    let s = Sandbox()
    let ann = s.append("ann's words", sender: "ann")
    #expect(s.run("edit", ann, "--sender", "ev", "ann's words, fixed").code == 0)
    var r = s.run("erase", "--sender", "ev")
    #expect(r.code == 0 && r.stdout == "erased 0 items (1 event) at seq 3\n" && r.stderr.isEmpty, "\(r)")
    #expect(s.run("purge").code == 0 && s.run("verify").code == 0)
    r = s.run("undo")
    #expect(r.code == 0 && s.run("list").stdout == "0  \(ann.prefix(8))  ann  ann's words\n", "\(r)")
    #expect(s.run("log", "--from", "4").stdout.contains("undoes 2"))
  }

  /// A replica cannot erase, by ids or by sender — also a sender with
  /// edits only, whose request is all unsigns — neither its command line
  /// nor its `serve`, which goes on serving.
  @Test func aReplicaCannotEraseBySender() throws {
    let server = Sandbox()
    let ann = server.append("ann's words", sender: "ann")
    #expect(server.run("edit", ann, "--sender", "eve", "ann's words, fixed").code == 0)
    let served = try ServedLog.running(server)
    defer { _ = served.stop() }
    let replica = Sandbox()
    #expect(replica.run("clone", served.url!).code == 0)
    let before = replica.contents()
    var r = replica.run("erase", "--sender", "eve")
    #expect(r.code == 64 && r.stderr.hasPrefix("msglog: a replica cannot erase"), "\(r)")
    // A sender that named nothing, with a purge after: refused the same
    // (it said "nothing to erase" and purged), nothing done.
    r = replica.run("erase", "--sender", "nobody-here", "--purge")
    #expect(r.code == 64 && r.stderr.hasPrefix("msglog: a replica cannot erase") && r.stdout.isEmpty, "\(r)")
    #expect(replica.contents() == before)
    let replicaServed = try ServedLog.running(replica)
    defer { _ = replicaServed.stop() }
    let reply = replicaServed.request("POST", "/api/erase", #"{"sender":"eve"}"#)
    #expect(reply.status == 400 && reply.body.contains("a replica cannot erase"), "\(reply)")
    #expect(replicaServed.request("GET", "/api/items").status == 200)
    r = replica.run("log", "--json")
    #expect(r.stdout.contains(#""sender":"eve""#) && !r.stdout.contains("unsign"), "\(r)")
    _ = before
  }

  /// A trim after an unsign may drop the edit it names (its item's text
  /// moved on to a later edit, or its item was removed before the
  /// horizon): the log still verifies, goes through export | import |
  /// export byte for byte, rebuilds, and clones.
  @Test(arguments: Store.allCases)
  func aTrimMayDropTheEditAnUnsignNames(_ store: Store) throws {
    let s = Sandbox(store)
    let a = s.append("first", sender: "ann")
    #expect(s.run("edit", a, "--sender", "eve", "first, by eve").code == 0)  // 2
    #expect(s.run("edit", a, "--sender", "ann", "first, again").code == 0)  // 3
    let b = s.append("second", sender: "ann")  // 4
    #expect(s.run("edit", b, "--sender", "eve", "second, by eve").code == 0)  // 5
    #expect(s.run("remove", b).code == 0)  // 6
    var r = s.run("erase", "--sender", "eve")  // unsigns 7 and 8
    #expect(r.code == 0 && r.stdout == "erased 0 items (2 events) at seq 8\n", "\(r)")
    _ = s.append("after", sender: "ann")  // 9
    r = s.run("trim", "--before", "7")
    #expect(r.code == 0, "\(r)")
    r = s.run("verify")
    #expect(r.code == 0 && r.stdout.hasPrefix("ok"), "\(r)")
    let export = s.export()
    #expect(export.contains(#""op":"unsign""#) && !export.contains("eve"), "\(export)")
    let copy = Sandbox(store)
    r = copy.run(["import"], stdin: Data(export.utf8))
    #expect(r.code == 0 && copy.export() == export, "\(r)")
    #expect(copy.run("verify").code == 0)
    if store == .lmdb {
      r = deleteHeadsRow(in: s.db)
      #expect(r.code == 0 && s.run("verify").code == 1, "\(r)")
      r = s.run("verify", "--repair")
      #expect(r.code == 0 && s.run("verify").code == 0 && s.export() == export, "\(r)")
    }
    let served = try ServedLog.running(s)
    defer { _ = served.stop() }
    let replica = Sandbox()
    r = replica.run("clone", served.url!)
    #expect(r.code == 0 && replica.export() == export, "\(r)")
  }

  /// What an import or a pull cannot make: an unsigned edit without its
  /// text (refused, nothing written), or two unsigns of one edit (`verify`
  /// says the log is damaged).
  @Test func anUnsignedEditKeepsItsTextAndHasOneUnsign() throws {
    let id = "00000001-0000-4000-8000-000000000001"
    let insert =
      #"{"seq":1,"stream":"main","version":1,"time":"2026-12-02T10:00:00.000Z","op":"insert","id":"\#(id)","index":0,"text":"hi","sender":"ann"}"#
    func edit(erased: Int, text: String) -> String {
      #"{"seq":2,"stream":"main","version":2,"time":"2026-12-02T10:00:01.000Z","op":"edit","id":"\#(id)","text":"\#(text)","erased":\#(erased)}"#
    }
    func unsign(_ seq: Int) -> String {
      #"{"seq":\#(seq),"stream":"main","version":\#(seq),"time":"2026-12-02T10:00:02.000Z","op":"unsign","id":"\#(id)","edit":2}"#
    }
    let s = Sandbox()
    var r = s.run(["import"], stdin: Data([insert, edit(erased: 3, text: ""), unsign(3)].joined(separator: "\n").utf8))
    #expect(r.code == 1 && r.stderr.contains("line 3: an unsigned edit keeps its text"), "\(r)")
    #expect(s.isEmpty)
    let twice = Sandbox()
    r = twice.run(
      ["import"],
      stdin: Data([insert, edit(erased: 4, text: "hi!"), unsign(3), unsign(4)].joined(separator: "\n").utf8))
    #expect(r.code == 0, "\(r)")
    r = twice.run("verify")
    #expect(r.code == 1 && r.stdout.contains("seq 3: unsigns seq 2, which does not say so"), "\(r)")
  }
}
