import Foundation
import MsglogTestSupport
import Testing

/// `erase` through the real binary, on LMDB and PostgreSQL: what it
/// prints, the texts gone from every event at every seq while every order
/// stays, an erased item never back, `verify`, and `POST /api/erase`.
@Suite struct EraseTests {
  /// Every `replay --json --at S` of the stream, with the texts, senders
  /// and erase marks left out: the orders erase must keep.
  private func orders(_ s: Sandbox, through head: Int) -> [String] {
    (0...head).map { seq in
      let r = s.run("replay", "--json", "--at", String(seq))
      return r.stdout.replacing(/"text":"[^"]*",("sender":"[^"]*",)?/, with: "").replacing(/,"erased":\d+/, with: "")
    }
  }

  /// A log of its own whose record names an erase past its head is
  /// damaged: no write could leave one (a replica's cut pull can, and
  /// `verify` passes it there: `EraseSyncTests.aPullCutBeforeTheEraseLeavesASoundReplica`).
  /// Imported, the erase later is checked as ever.
  @Test(arguments: Store.allCases)
  func anEraseNamedPastTheHeadIsDamageInALogOfItsOwn(_ store: Store) throws {
    let server = Sandbox()
    let secret = server.append("SECRET", sender: "eve")
    server.append("stays", sender: "ann")
    #expect(server.run("erase", secret).code == 0)
    let lines = server.export().split(separator: "\n")
    #expect(lines.count == 3 && lines[0].contains(#""erased":3"#))
    let cut = Sandbox(store)
    var r = cut.run(["import"], stdin: Data((lines[0...1].joined(separator: "\n") + "\n").utf8))
    #expect(r.code == 0, "\(r)")
    r = cut.run("verify")
    #expect(r.code == 1 && r.stdout.contains("seq 1: erased at seq 3, which is not an erase of"), "\(r)")
    r = cut.run(["import"], stdin: Data((lines[2] + "\n").utf8))
    #expect(r.code == 0, "\(r)")
    #expect(cut.run("verify").code == 0)
    #expect(cut.export() == server.export())
  }

  @Test(arguments: Store.allCases)
  func erasedTextsAreGoneAndOrdersStay(_ store: Store) throws {
    let s = Sandbox(store)
    let keep = s.append("keep me", sender: "ann")
    let secret = s.append("SENTINEL-ONE", sender: "eve")
    let other = s.append("other", sender: "bob")
    #expect(s.run("edit", secret, "--sender", "eve", "SENTINEL-TWO").code == 0)
    #expect(s.run("move", "0", "2").code == 0)
    #expect(s.run("remove", other).code == 0)
    let before = orders(s, through: 6)

    var r = s.run("erase", String(secret.prefix(8)))
    #expect(r.code == 0 && r.stdout == "erased 1 item (2 events) at seq 7\n" && r.stderr.isEmpty, "\(r)")
    r = s.run("list")
    #expect(r.stdout == "0  \(keep.prefix(8))  ann  keep me\n", "\(r)")
    // Every order at every seq is what it was; the text is gone from all of them.
    #expect(orders(s, through: 6) == before)
    let export = s.export()
    #expect(!export.contains("SENTINEL") && !export.contains("eve"), "\(export)")
    #expect(
      maskingTimes(export).contains(
        #"{"seq":2,"stream":"main","version":2,"time":"TIME","op":"insert","id":"\#(secret)","index":1,"text":"","erased":7}"#
      ), "\(export)")
    #expect(
      maskingTimes(export).contains(
        #"{"seq":4,"stream":"main","version":4,"time":"TIME","op":"edit","id":"\#(secret)","text":"","erased":7}"#),
      "\(export)")
    #expect(maskingTimes(export).hasSuffix(#""op":"erase","id":"\#(secret)"}"# + "\n"), "\(export)")
    r = s.run("log")
    #expect(r.lines[1].hasSuffix("insert  \(secret)  at 1  -  [erased]"), "\(r)")
    #expect(r.lines[3].hasSuffix("edit  \(secret)  -  [erased]"), "\(r)")
    #expect(r.lines[6].hasSuffix("erase  \(secret)  at 0"), "\(r)")
    r = s.run("replay", "--at", "4")
    #expect(r.lines[1] == "1  \(secret.prefix(8))  -  [erased]", "\(r)")
    r = s.run("replay", "--at", "4", "--json")
    #expect(r.stdout.contains(#""id":"\#(secret)","text":"","time":"#) && r.stdout.contains(#""erased":7}"#), "\(r)")
    r = s.run("diff", "1", "6")
    #expect(r.code == 0 && !r.stdout.contains("SENTINEL") && r.stdout.contains("[erased]"), "\(r)")
    // export | import | export: byte for byte, the erased events and all.
    let copy = Sandbox(store)
    r = copy.run(["import"], stdin: Data(export.utf8))
    #expect(r.code == 0, "\(r)")
    #expect(copy.export() == export)
    #expect(copy.run("verify").code == 0)
    r = s.run("verify")
    #expect(r.code == 0 && r.stdout.hasPrefix("ok"), "\(r)")

    // Never back, whatever asks.
    let words = "msglog: item \(secret) was erased at seq 7\n"
    r = s.run("restore", secret)
    #expect(r.code == 1 && r.stderr.hasPrefix(words), "\(r)")
    r = s.run("edit", secret, "again")
    #expect(r.code == 1 && r.stderr.hasPrefix(words), "\(r)")
    r = s.run("undo", "7")
    #expect(r.code == 1 && r.stderr.hasPrefix(words), "\(r)")
    r = s.run("undo", "2")
    #expect(r.code == 1 && r.stderr.hasPrefix(words), "\(r)")
    // A plain undo passes over the erase: the latest undoable is the remove of `other`.
    r = s.run("undo")
    #expect(r.code == 0 && r.stdout.hasPrefix("restored \(other)"), "\(r)")

    // Again: nothing to do.
    r = s.run("erase", secret, "--json")
    #expect(r.code == 0 && r.stdout == #"{"erased":[],"events":0}"# + "\n", "\(r)")
    #expect(r.stderr == "msglog: nothing to erase: the item was erased already\n", "\(r)")
    // A removed item is erased too, and stays removed.
    #expect(s.run("remove", other).code == 0)
    r = s.run("erase", other, "--json")
    #expect(r.code == 0 && r.stdout == #"{"erased":["\#(other)"],"events":1,"seq":10}"# + "\n", "\(r)")
    #expect(s.run("list").stdout == "0  \(keep.prefix(8))  ann  keep me\n")
    r = s.run("verify")
    #expect(r.code == 0 && r.stdout.hasPrefix("ok"), "\(r)")
  }

  @Test(arguments: Store.allCases)
  func eraseBySender(_ store: Store) throws {
    let s = Sandbox(store)
    let a = s.append("from eve SENTINEL-A", sender: "eve")
    _ = s.append("from ann", sender: "ann")
    let b = s.append("eve elsewhere SENTINEL-B", sender: "eve", stream: "other")
    // MSGLOG_STREAM narrows it as --stream does (a tester's erase in every
    // stream with the variable set): an erase cannot be undone.
    var r = s.run(["erase", "--sender", "eve", "--json"], environment: ["MSGLOG_STREAM": "main"])
    #expect(r.code == 0 && r.stdout == #"{"erased":["\#(a)"],"events":1,"seq":4}"# + "\n", "\(r)")
    #expect(s.export().contains("SENTINEL-B"))
    r = s.run(["erase", "--sender", "eve", "--stream", "main"], environment: ["MSGLOG_STREAM": "other"])
    #expect(r.code == 0 && r.stderr.hasPrefix("msglog: nothing to erase"), "\(r)")
    #expect(s.export().contains("SENTINEL-B"))
    // Without --stream or the variable (empty is unset): every stream.
    r = s.run(["erase", "--sender", "eve"], environment: ["MSGLOG_STREAM": ""])
    #expect(r.code == 0 && r.stdout == "erased 1 item (1 event) at seq 5\n", "\(r)")
    #expect(s.run("list", "--stream", "other").stdout.isEmpty)
    let export = s.export()
    #expect(!export.contains("SENTINEL") && !export.contains("\"eve\""), "\(export)")
    r = s.run("erase", "--sender", "eve")
    #expect(r.code == 0 && r.stdout.isEmpty && r.stderr.hasPrefix("msglog: nothing to erase"), "\(r)")
    #expect(!b.isEmpty)
    r = s.run("erase", a, "--sender", "eve")
    #expect(r.code == 64, "\(r)")
    r = s.run("erase")
    #expect(r.code == 64, "\(r)")
    // A sender no write could have named is refused as a write's is (it
    // said "nothing to erase", exit 0).
    let before = s.export()
    for (sender, words) in [
      ("", "msglog: sender is empty"), (String(repeating: "e", count: 2000), "msglog: sender is 2000 bytes"),
    ] {
      r = s.run("erase", "--sender", sender)
      #expect(r.code == 64 && r.stderr.hasPrefix(words), "\(r)")
    }
    #expect(s.export() == before)
    #expect(s.run("verify").code == 0)
  }

  /// The first erase moves a database on (msglog/8, PostgreSQL schema 6),
  /// so that an older msglog refuses the log by its format; the erase is
  /// record format 5 and the records it blanked stay framed (format 4).
  @Test(arguments: Store.allCases)
  func theFirstEraseMovesTheFormatOn(_ store: Store) throws {
    let s = Sandbox(store)
    let a = s.append("one")
    _ = s.append("two")
    #expect(s.run("erase", a).code == 0)
    switch store {
    case .lmdb:
      let r = lmdbFormats(of: s.db)
      #expect(r.stdout == "msglog/8 [4, 4, 5]\n", "\(r)")
    case .postgres:
      let name = String(s.db.split(separator: "/").last!)
      let r = PostgresCluster.psql(
        "SELECT convert_from(value, 'UTF8') FROM msglog.meta WHERE key = 'schema'", database: name)
      #expect(r.stdout == "6\n", "\(r)")
    }
    #expect(s.run("verify").code == 0)
  }

  /// `POST /api/erase`: by ids and by sender, the refusal of an erased
  /// item's restore as a 409, and a malformed body as a 400.
  @Test func eraseOverHTTP() throws {
    let s = Sandbox()
    let a = s.append("SENTINEL over http", sender: "eve")
    _ = s.append("stays", sender: "ann")
    let served = try ServedLog.running(s)
    defer { _ = served.stop() }
    var reply = served.request("POST", "/api/erase", #"{"ids":["\#(a.prefix(8))"]}"#)
    #expect(reply.status == 200 && reply.body == #"{"erased":["\#(a)"],"events":1,"seq":3}"#, "\(reply)")
    reply = served.request("POST", "/api/restore", #"{"id":"\#(a)"}"#)
    #expect(reply.status == 409 && reply.body.contains("was erased at seq 3"), "\(reply)")
    reply = served.request("POST", "/api/erase", #"{"sender":"eve"}"#)
    #expect(reply.status == 200 && reply.body == #"{"erased":[],"events":0}"#, "\(reply)")
    reply = served.request("POST", "/api/erase", #"{"ids":[1]}"#)
    #expect(reply.status == 400, "\(reply)")
    reply = served.request("POST", "/api/erase", #"{"ids":["\#(a)"],"sender":"eve"}"#)
    #expect(reply.status == 400, "\(reply)")
    reply = served.request("GET", "/api/events")
    #expect(reply.status == 200 && !reply.body.contains("SENTINEL"), "\(reply)")
  }
}
