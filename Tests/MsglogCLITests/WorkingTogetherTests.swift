import Foundation
import MsglogTestSupport
import Testing

/// `edit`, `restore`, `undo` and `--rebase` through the real binary: what
/// each prints, the seed scenarios of working together against the Python
/// model, a random session against the model, and the formats on disk.
@Suite struct WorkingTogetherTests {
  /// The scenarios of working together (Fixtures/make-fixtures.py): edits,
  /// a restored card, undone and rebased drags, as export lines. Imported,
  /// they give the model's list (also after a full replay), verify clean,
  /// and export byte for byte as the model wrote them.
  @Test(arguments: ["chat-edits", "colour-board-undo", "form-cards-restore"], Store.allCases)
  func scenario(_ name: String, _ store: Store) throws {
    let s = Sandbox(store)
    let lines = try String(contentsOfFile: fixture(name + ".jsonl"), encoding: .utf8)
    let expected = try String(contentsOfFile: fixture(name + ".expected.json"), encoding: .utf8)
    var r = s.run(["import"], stdin: Data(lines.utf8))
    #expect(r.code == 0, "\(r)")
    r = s.run("list", "--json")
    #expect(r.stdout == expected, "\(r)")
    #expect(s.run("replay", "--json").stdout == expected)
    r = s.run("verify")
    #expect(r.code == 0 && r.stdout.hasPrefix("ok"), "\(r)")
    #expect(s.export() == lines)
  }

  /// An export of one stream whose events undo others, or hold an erased
  /// text, names seqs of the whole log: imported elsewhere its lines would
  /// name other events. Refused as what it is (exit 1, the line, both
  /// seqs), nothing imported, where it was said as "there is no event 3"
  /// with a hint about `msglog log`, or as a corrupted log to restore from
  /// a backup; the whole log's export imports as ever.
  @Test(arguments: Store.allCases) func anExportOfOneStreamThatNamesSeqsImportsOnlyAtThem(_ store: Store) throws {
    let s = Sandbox(store)
    _ = s.append("elsewhere", stream: "a")
    let removed = s.append("b1", stream: "b")
    #expect(s.run(["--stream", "b", "remove", removed]).code == 0)
    #expect(s.run(["--stream", "b", "undo"]).code == 0)
    let erased = s.append("c1", stream: "c")
    #expect(s.run(["--stream", "c", "erase", erased]).code == 0)
    for (stream, words) in [
      ("b", "line 3: its event was seq 4 of the exported log and would be seq 3 here, but an undo names seqs"),
      ("c", "line 1: its event was seq 5 of the exported log and would be seq 1 here, but an erased text names seqs"),
    ] {
      let one = s.run(["export", "--stream", stream])
      let fresh = Sandbox(store)
      let r = fresh.run(["import"], stdin: Data(one.stdout.utf8))
      #expect(r.code == 1 && r.stderr.hasPrefix("msglog: " + words), "\(r)")
      #expect(fresh.run(["export"]).stdout.isEmpty)
    }
    let whole = Sandbox(store)
    #expect(whole.run(["import"], stdin: Data(s.export().utf8)).code == 0)
    #expect(whole.export() == s.export())
  }

  @Test func whatEachCommandPrints() throws {
    let s = Sandbox()
    let red = s.append("red", sender: "ann")
    let green = s.append("green", sender: "bob")
    let blue = s.append("blue", sender: "ann")
    var r = s.run("edit", red, "--sender", "bob", "crimson", "red")
    #expect(r.code == 0 && r.stdout == "edited \(red)\n" && r.stderr.isEmpty, "\(r)")
    r = s.run("edit", String(red.prefix(8)), "crimson red")
    #expect(
      r.code == 0 && r.stdout.isEmpty && r.stderr == "msglog: nothing to do: the item has this text already\n", "\(r)")
    r = s.run(["edit", red], stdin: Data("scarlet\n".utf8))
    #expect(r.code == 0 && r.stdout == "edited \(red)\n", "\(r)")
    r = s.run("list")
    #expect(
      r.stdout
        == "0  \(red.prefix(8))  ann  scarlet\n1  \(green.prefix(8))  bob  green\n2  \(blue.prefix(8))  ann  blue\n",
      "\(r)")
    r = s.run("list", "--json")
    #expect(
      maskingTimes(r.stdout).hasPrefix(
        #"{"stream":"main","seq":5,"version":5,"count":3,"items":[{"index":0,"id":"\#(red)","text":"scarlet","sender":"ann","time":"TIME","seq":1,"edited":"TIME"},{"index":1,"id":"\#(green)","text":"green","sender":"bob","time":"TIME","seq":2}"#
      ), "\(r)")
    #expect(s.run("remove", green).code == 0)
    r = s.run("restore", String(green.prefix(8)))
    #expect(r.code == 0 && r.stdout == "restored \(green) at 1\n", "\(r)")
    r = s.run("undo")
    #expect(r.code == 0 && r.stdout == "removed \(green)\n", "\(r)")
    // The latest event not undone is now the remove (the restore is undone).
    r = s.run("undo", "--json")
    #expect(
      maskingTimes(r.stdout)
        == #"{"seq":9,"stream":"main","version":9,"time":"TIME","id":"\#(green)","index":1,"undoes":6}"#
        + "\n", "\(r)")
    r = s.run("restore", green, "--index", "0", "--json")
    #expect(r.code == 1 && r.stderr.hasPrefix("msglog: item \(green) is live"), "\(r)")
    r = s.run("undo", "4", "--json")
    #expect(
      maskingTimes(r.stdout)
        == #"{"seq":10,"stream":"main","version":10,"time":"TIME","id":"\#(red)","index":0,"undoes":4}"# + "\n", "\(r)")
    r = s.run("edit", blue, "navy", "--json")
    #expect(
      maskingTimes(r.stdout) == #"{"seq":11,"stream":"main","version":11,"time":"TIME","id":"\#(blue)","index":2}"#
        + "\n", "\(r)")
    // Redo: undo the undo.
    r = s.run("undo", "10")
    #expect(r.code == 0 && r.stdout == "edited \(red)\n", "\(r)")
    r = s.run("move", "2", "0")
    #expect(r.code == 0, "\(r)")
    r = s.run("undo")
    #expect(r.code == 0 && r.stdout == "moved \(blue) 0 -> 2\n", "\(r)")
    // Undoing the undone move's undo moves it again; undoing it twice is refused.
    r = s.run("undo", "14")
    #expect(r.code == 0 && r.stdout == "moved \(blue) 2 -> 0\n", "\(r)")
    r = s.run("undo", "14")
    #expect(
      r.code == 1 && r.stderr.hasPrefix("msglog: event 14 is already undone (by event 15)\nhint: undo event 15"), "\(r)"
    )
    r = s.run("log", "--from", "7")
    #expect(
      maskingTimes(r.stdout) == """
        7  TIME  main  v7  restore  \(green)  at 1
        8  TIME  main  v8  remove  \(green)  undoes 7
        9  TIME  main  v9  restore  \(green)  undoes 6  at 1
        10  TIME  main  v10  edit  \(red)  undoes 4  -  red
        11  TIME  main  v11  edit  \(blue)  -  navy
        12  TIME  main  v12  edit  \(red)  undoes 10  -  scarlet
        13  TIME  main  v13  move  \(blue)  2 -> 0
        14  TIME  main  v14  move  \(blue)  undoes 13  0 -> 2
        15  TIME  main  v15  move  \(blue)  undoes 14  2 -> 0

        """, "\(r)")
    r = s.run("log", "--from", "8", "--limit", "4", "--json")
    #expect(
      maskingTimes(r.stdout) == """
        {"seq":8,"stream":"main","version":8,"time":"TIME","op":"remove","id":"\(green)","undoes":7}
        {"seq":9,"stream":"main","version":9,"time":"TIME","op":"restore","id":"\(green)","index":1,"undoes":6}
        {"seq":10,"stream":"main","version":10,"time":"TIME","op":"edit","id":"\(red)","text":"red","undoes":4}
        {"seq":11,"stream":"main","version":11,"time":"TIME","op":"edit","id":"\(blue)","text":"navy"}

        """, "\(r)")
    #expect(s.run("verify").code == 0)
  }

  /// `undo --sender NAME`: the edit that undoes an edit names who undid
  /// (who edited back, as any edit names who edited); an undoing that is
  /// a remove, a restore or a move names no one; the log exports and
  /// imports as it is.
  @Test(arguments: Store.allCases) func anUndoNamesWhoUndid(_ store: Store) throws {
    let s = Sandbox(store)
    let card = s.append("card", sender: "eve")
    #expect(s.run("edit", card, "--sender", "eve", "card, by eve").code == 0)
    var r = s.run("undo", "--sender", "ann", "--json")
    #expect(r.code == 0 && r.stdout.contains(#""undoes":2"#), "\(r)")
    var last = s.run("log", "--json").lines.last ?? ""
    #expect(last.contains(#""op":"edit""#) && last.contains(#""text":"card","sender":"ann""#), "\(last)")
    r = s.run("list")
    #expect(r.stdout == "0  \(card.prefix(8))  eve  card\n", "\(r)")  // the author stays eve
    // Without --sender an edit back names no one, as before.
    #expect(s.run("undo", "3").code == 0)
    last = s.run("log", "--json").lines.last ?? ""
    #expect(last.contains(#""text":"card, by eve""#) && !last.contains("sender"), "\(last)")
    // A remove names no one: the sender is not kept anywhere.
    r = s.run("undo", "1", "--sender", "ann")
    #expect(r.code == 0 && r.stdout == "removed \(card)\n", "\(r)")
    #expect(!(s.run("log", "--json").lines.last ?? "").contains("sender"))
    let exported = s.export()
    let copy = Sandbox(store)
    #expect(copy.run(["import"], stdin: Data(exported.utf8)).code == 0)
    #expect(copy.export() == exported)
    #expect(s.run("verify").code == 0)
  }

  /// Two people drag cards on the board they both see at version 5: the
  /// second drag, stale, lands where its person meant (after the card it
  /// was dropped under), and says it was rebased; nothing is refused.
  @Test(arguments: Store.allCases) func twoDragsAtOnceBothLand(_ store: Store) throws {
    let s = Sandbox(store)
    let ids = ["A", "B", "C", "D", "E"].map { s.append($0) }
    func order() -> [String] { s.run("list").lines.map { String($0.split(separator: " ").last!) } }
    // Ann: E to the top.
    var r = s.run("move", "4", "0", "--expect-version", "5", "--rebase", "--json")
    #expect(r.code == 0 && !r.stdout.contains("rebased"), "\(r)")
    #expect(order() == ["E", "A", "B", "C", "D"])
    // Bob, at version 5 too: B to just after D.
    r = s.run("move", "1", "3", "--expect-version", "5", "--json")
    #expect(r.code == 75, "without --rebase a stale drag is a conflict: \(r)")
    r = s.run("move", "1", "3", "--expect-version", "5", "--rebase", "--json")
    #expect(
      maskingTimes(r.stdout)
        == #"{"seq":7,"stream":"main","version":7,"time":"TIME","id":"\#(ids[1])","from":2,"to":4,"rebased":true}"#
        + "\n", "\(r)")
    #expect(order() == ["E", "A", "C", "D", "B"])
    // A stale insert goes after the card it was typed under (B), wherever that went.
    r = s.run("insert", "2", "B2", "--expect-version", "5", "--rebase", "--json")
    #expect(r.code == 0 && r.stdout.contains(#""index":5,"rebased":true"#), "\(r)")
    // A stale remove and edit name their card by id.
    r = s.run("remove", ids[2], "--expect-version", "5", "--rebase")
    #expect(r.code == 0 && r.stdout == "removed \(ids[2]) (rebased from version 5)\n", "\(r)")
    r = s.run("edit", ids[3], "D!", "--expect-version", "6", "--rebase", "--json")
    #expect(r.code == 0 && r.stdout.contains(#""index":2,"rebased":true"#), "\(r)")
    // At the version it names, a rebase is a plain write.
    r = s.run("move", "0", "1", "--expect-version", "10", "--rebase", "--json")
    #expect(r.code == 0 && !r.stdout.contains("rebased") && r.stdout.contains(#""from":0,"to":1"#), "\(r)")
    #expect(order() == ["A", "E", "D!", "B", "B2"])
    #expect(s.run("verify").code == 0)
  }

  /// A rebased write says so in text too, after what it did: what it was
  /// asked at which version (an insert's id stays alone on stdout, for
  /// scripts; where it went is said on stderr).
  @Test func aRebasedWriteSaysSoInText() throws {
    let s = Sandbox()
    let ids = ["A", "B", "C", "D", "E"].map { s.append($0) }
    #expect(s.run("move", "4", "0").stdout == "moved \(ids[4]) 4 -> 0\n")
    var r = s.run("move", "1", "3", "--expect-version", "5", "--rebase")
    #expect(r.code == 0 && r.stdout == "moved \(ids[1]) 2 -> 4 (rebased from 1 -> 3 at version 5)\n", "\(r)")
    r = s.run("insert", "2", "B2", "--expect-version", "5", "--rebase")
    #expect(r.code == 0 && r.stdout.count == 37, "\(r)")
    #expect(
      r.stderr == "msglog: rebased: the stream moved on since version 5, so it went in at index 5 (2 at version 5)\n")
    r = s.run("edit", ids[3], "D!", "--expect-version", "6", "--rebase")
    #expect(r.code == 0 && r.stdout == "edited \(ids[3]) (rebased from version 6)\n", "\(r)")
    // At the version it names, a rebase is a plain write, and says nothing more.
    r = s.run("move", "0", "1", "--expect-version", "9", "--rebase")
    #expect(r.code == 0 && r.stdout == "moved \(ids[4]) 0 -> 1\n" && r.stderr.isEmpty, "\(r)")
  }

  /// `insert --lines --rebase`: the first line goes after the item it was
  /// typed under at version N, the others after it, in one transaction.
  @Test func aStaleBatchOfLinesFollowsItsFirst() throws {
    let s = Sandbox()
    for text in ["a", "b", "c"] { s.append(text) }
    #expect(s.run("move", "0", "2").code == 0)  // b c a
    let r = s.run(
      ["insert", "1", "--lines", "--expect-version", "3", "--rebase", "--json"], stdin: Data("x\ny\n".utf8))
    #expect(r.code == 0, "\(r)")
    #expect(r.lines.count == 2 && r.lines.allSatisfy { $0.contains(#""rebased":true"#) }, "\(r)")
    #expect(s.run("list").lines.map { String($0.split(separator: " ").last!) } == ["b", "c", "a", "x", "y"])
  }

  @Test func diffShowsEditsAsReloads() throws {
    let s = Sandbox()
    let a = s.append("Morning!", sender: "ann")
    let b = s.append("Room 4B", sender: "bob")
    #expect(s.run("edit", b, "Room 4C").code == 0)
    #expect(s.run("move", "1", "0").code == 0)
    var r = s.run("diff", "2", "4")
    #expect(r.stdout == "> 1 -> 0  \(b.prefix(8))\n~ 0  \(b.prefix(8))  bob  Room 4C\n", "\(r)")
    r = s.run("diff", "4", "2", "--json")
    #expect(
      r.stdout
        == #"{"stream":"main","from":4,"to":2,"removed":[],"inserted":[],"moved":[{"from":1,"to":0,"id":"\#(a)"}],"edited":[{"index":1,"id":"\#(b)","text":"Room 4B"}]}"#
        + "\n", "\(r)")
    // An edit undone between the two seqs is no change.
    #expect(s.run("undo", "3").code == 0)
    #expect(s.run("diff", "2", "5").stdout == "> 1 -> 0  \(b.prefix(8))\n")
  }

  /// A new database is msglog/6 and every record it writes is framed
  /// (record format 4), whatever the events; verify --repair keeps it so;
  /// a newer format is refused here with a clear word. (A database made
  /// before msglog/6 keeps its formats: `OlderMsglogTests`.)
  @Test func formatVersions() throws {
    let s = Sandbox()
    s.append("one")
    s.append("two")
    #expect(s.run("move", "1", "0").code == 0)
    #expect(s.run(["remove", s.run("list").lines[0].split(separator: " ")[1].description]).code == 0)
    let inspect = """
      import lmdb, sys
      env = lmdb.open(sys.argv[1], max_dbs=8, readonly=True, lock=False)
      meta, events = env.open_db(b"meta", create=False), env.open_db(b"events", create=False)
      with env.begin() as txn:
          print(txn.get(b"format", db=meta).decode(), sorted({bytes(v)[0] for _, v in txn.cursor(db=events)}))
      """
    var r = python(["-c", inspect, s.db])
    #expect(r.stdout == "msglog/6 [4]\n", "\(r)")
    let id = s.run("list").lines[0].split(separator: " ")[1].description
    #expect(s.run("edit", id, "uno").code == 0)
    #expect(s.run("undo").code == 0)
    r = python(["-c", inspect, s.db])
    #expect(r.stdout == "msglog/6 [4]\n", "\(r)")
    // verify --repair keeps the format.
    #expect(s.run("verify", "--repair").code == 0)
    #expect(python(["-c", inspect, s.db]).stdout == "msglog/6 [4]\n")
    r = python([
      "-c",
      "import lmdb,sys; e=lmdb.open(sys.argv[1],max_dbs=8); m=e.open_db(b'meta'); t=e.begin(write=True,db=m); t.put(b'format',b'msglog/99'); t.commit()",
      s.db,
    ])
    #expect(r.code == 0, "\(r)")
    r = s.run("list")
    #expect(
      r.code == 1
        && r.stderr
          == "msglog: \(s.db) was written by a newer msglog (format msglog/99; this one knows msglog/11)\nhint: use the newer msglog that wrote it\n",
      "\(r)")
  }

  /// `serve` refuses a newer msglog's log at its start, as every other
  /// command does: it served one, answering every request 409 while
  /// `/livez` said it was well, for a supervisor to keep running.
  @Test func aNewerMsglogsLogIsNotServed() throws {
    let s = Sandbox()
    s.append("a message")
    var r = python([
      "-c",
      "import lmdb,sys; e=lmdb.open(sys.argv[1],max_dbs=8); m=e.open_db(b'meta'); t=e.begin(write=True,db=m); t.put(b'format',b'msglog/99'); t.commit()",
      s.db,
    ])
    #expect(r.code == 0, "\(r)")
    let data = FileManager.default.contents(atPath: s.db + "/data.mdb")
    r = s.start(["serve", "--listen", "127.0.0.1:0"]).finish(endingAfter: 30)
    #expect(
      r.code == 1
        && r.stderr
          == "msglog: \(s.db) was written by a newer msglog (format msglog/99; this one knows msglog/11)\nhint: use the newer msglog that wrote it\n",
      "\(r)")
    #expect(r.stdout.isEmpty, "\(r)")
    #expect(FileManager.default.contents(atPath: s.db + "/data.mdb") == data)
  }

  /// docs/FORMAT.md's new records are precise enough for a third-party
  /// client: scripts/decode-log.py prints what `export` prints.
  @Test(arguments: ["chat-edits", "colour-board-undo", "form-cards-restore"])
  func aPythonReaderDecodesTheNewEvents(_ name: String) throws {
    let s = Sandbox()
    var r = s.run(["import", fixture(name + ".jsonl")])
    #expect(r.code == 0, "\(r)")
    r = python([repositoryRoot + "/scripts/decode-log.py", s.db])
    #expect(r.code == 0, "\(r)")
    #expect(r.stdout == s.export())
  }

  /// `export | import | export` is byte for byte the same with every new
  /// event, on both stores (a random session of the model's, with edits,
  /// restores, undos, redos and rebased writes).
  @Test(arguments: Store.allCases) func exportImportExport(_ store: Store) throws {
    let script = python([fixture("differential.py"), "7", "250"])
    let export = try #require(script.lines.last)
    let lines = try JSONSerialization.jsonObject(with: Data(export.utf8)) as! [String: [String]]
    let text = lines["export"]!.map { $0 + "\n" }.joined()
    let s = Sandbox(store)
    var r = s.run(["import"], stdin: Data(text.utf8))
    #expect(r.code == 0, "\(r)")
    #expect(s.export() == text)
    let copy = Sandbox(store)
    r = copy.run(["import"], stdin: Data(s.export().utf8))
    #expect(r.code == 0, "\(r)")
    #expect(copy.export() == text)
    #expect(copy.run("verify").code == 0)
  }
}
