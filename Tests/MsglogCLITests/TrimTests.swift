import Foundation
import Msglog
import MsglogTestSupport
import Testing

#if canImport(Glibc)
  import Glibc
#endif

/// `trim` through the real binary on LMDB and PostgreSQL: every list and
/// replay from the seq before the horizon on exactly as before, history
/// below it refused, base lines in the export, writes after it, `verify`,
/// a dry run that changes nothing, bad input, a horizon a later restore
/// pulls down, the trimmed texts gone from every file after `purge`,
/// `kill -9` mid-trim (PostgreSQL's last two: `PostgresTrimTests`).
@Suite(.serialized) struct TrimTests {
  /// A log of two streams whose history has every kind of event: edits
  /// (an item edited twice before the horizon), removes, moves, an undo.
  /// Returns the ids of `main` in insert order.
  private func history(_ s: Sandbox) -> [String] {
    let ids = (1...6).map { s.append("m\($0)", sender: $0 == 2 ? "ann" : nil) }
    s.append("o1", stream: "other")
    #expect(s.run("edit", ids[1], "m2 edited").code == 0)  // 8
    #expect(s.run("edit", ids[1], "m2 edited twice").code == 0)  // 9
    #expect(s.run("remove", ids[0]).code == 0)  // 10
    #expect(s.run("move", "0", "3").code == 0)  // 11
    s.append("m7")  // 12
    #expect(s.run("remove", ids[3]).code == 0)  // 13
    #expect(s.run("undo", "13").code == 0)  // 14: restores m4
    s.append("o2", stream: "other")  // 15
    return ids
  }

  private func replays(_ s: Sandbox, _ stream: String, _ seqs: ClosedRange<Int>) -> [String] {
    seqs.map { s.run("replay", "--json", "--stream", stream, "--at", String($0)).stdout }
  }

  @Test(arguments: Store.allCases)
  func everyListFromTheHorizonOnStaysAndHistoryBelowIsRefused(_ store: Store) throws {
    let s = Sandbox(store)
    let ids = history(s)
    let main = replays(s, "main", 9...15)
    let other = replays(s, "other", 9...15)
    let lists = [s.run("list", "--json").stdout, s.run("list", "--json", "--stream", "other").stdout]
    let diff = s.run("diff", "9", "15").stdout
    let later = s.run("log", "--from", "10").stdout

    var r = s.run("trim", "--before", "10")
    // 1…9 leave history; of their records, all but the texts the bases
    // read (m1…m6's inserts, the second edit of m2, o1's insert) go.
    #expect(r.code == 0 && r.stdout == "trimmed 9 events before seq 10\n" && r.stderr.isEmpty, "\(r)")
    #expect(replays(s, "main", 9...15) == main)
    #expect(replays(s, "other", 9...15) == other)
    #expect([s.run("list", "--json").stdout, s.run("list", "--json", "--stream", "other").stdout] == lists)
    #expect(s.run("diff", "9", "15").stdout == diff)
    #expect(s.run("log").stdout == later)
    #expect(s.run("log", "--from", "9").stdout == later)

    let words = "msglog: history before seq 10 was trimmed\n"
    for args in [["replay", "--at", "8"], ["diff", "3", "12"], ["log", "--from", "8"], ["undo", "8"]] {
      r = s.run(args)
      #expect(r.code == 1 && r.stderr.hasPrefix(words) && r.stdout.isEmpty, "\(args): \(r)")
    }
    r = s.run("verify")
    #expect(r.code == 0 && r.stdout.hasPrefix("ok: 15 events, 2 streams"), "\(r)")
    if store == .postgres {
      // Schema 7: an older msglog refuses the trimmed log by its schema.
      #expect(schema(of: s) == "7")
    }

    // The export begins with the bases, in the streams' name order.
    let export = s.export().split(separator: "\n").map(String.init)
    #expect(export.count == 2 + 6, "\(export)")
    #expect(
      export[0].hasPrefix(
        #"{"op":"base","stream":"main","seq":9,"version":8,"items":[{"index":0,"id":"\#(ids[0])","text":"m1""#))
    #expect(export[0].contains(#""text":"m2 edited twice","sender":"ann""#) && export[0].contains(#","textSeq":9}"#))
    #expect(export[1].hasPrefix(#"{"op":"base","stream":"other","seq":9,"version":1,"items":[{"index":0,"#))
    #expect(export[2].hasPrefix(#"{"seq":10,"#))
    // export | import | export, byte for byte, from standard input and from a file.
    let exported = s.export()
    let copy = Sandbox(store)
    r = copy.run(["import"], stdin: Data(exported.utf8))
    #expect(r.code == 0 && r.stdout == "imported 6 events; the head is seq 15\n", "\(r)")
    #expect(copy.export() == exported)
    #expect(copy.run("replay", "--at", "9").stdout == s.run("replay", "--at", "9").stdout)
    #expect(copy.run("verify").code == 0)
    let file = copy.dir + "/trimmed.jsonl"
    #expect(FileManager.default.createFile(atPath: file, contents: Data(exported.utf8)))
    let fromFile = Sandbox(store)
    r = fromFile.run("import", file)
    #expect(r.code == 0 && fromFile.export() == exported, "\(r)")
    // Into a log with events: refused, nothing written.
    r = copy.run(["import"], stdin: Data(exported.utf8))
    #expect(r.code == 1 && r.stderr.hasPrefix("msglog: line 1: a base line goes into an empty database only"), "\(r)")
    #expect(copy.export() == exported)

    // Writes go on: an edit of an item from the base, an erase of the one
    // whose first edit was trimmed, an undo of an event after the horizon.
    #expect(s.run("edit", ids[2], "m3 after").code == 0)
    r = s.run("erase", ids[1])
    #expect(r.code == 0 && r.stdout.hasPrefix("erased 1 item (2 events)"), "\(r)")
    #expect(!s.run("replay", "--at", "9").stdout.contains("m2 edited"))
    #expect(s.run("undo", "16").code == 0)
    r = s.run("verify")
    #expect(r.code == 0 && r.stdout.hasPrefix("ok"), "\(r)")

    // verify --repair rebuilds the derived tables from the bases.
    let repaired = s.run("list").stdout
    switch store {
    case .lmdb:
      r = deleteHeadsRow(in: s.db)
    case .postgres:
      r = PostgresCluster.psql("DELETE FROM msglog.streams WHERE stream = 'main'::bytea", database: s.databaseName!)
    }
    #expect(r.code == 0, "\(r)")
    #expect(s.run("verify").code == 1)
    r = s.run("verify", "--repair")
    #expect(r.code == 0 && s.run("verify").code == 0 && s.run("list").stdout == repaired, "\(r)")

    // A second trim moves the horizon on; one at or before it trims nothing.
    r = s.run("trim", "--before", "12", "--json")
    #expect(r.code == 0 && r.stdout == #"{"trimmed":2,"horizon":12}"# + "\n", "\(r)")
    r = s.run("trim", "--before", "5")
    #expect(r.code == 0 && r.stdout == "trimmed 0 events before seq 12\n", "\(r)")
    #expect(s.run("verify").code == 0)
  }

  /// `serve` on a trimmed log: below the horizon is 410, the rest as before.
  @Test(arguments: Store.allCases)
  func serveSaysGoneBelowTheHorizon(_ store: Store) throws {
    let s = Sandbox(store)
    _ = history(s)
    let served = try ServedLog.running(s)
    defer { _ = served.stop() }
    let items = served.request("GET", "/api/items?at=9")
    // A write of the server's own, whose state a later one may build on.
    #expect(served.request("POST", "/api/append", #"{"text":"before the trim"}"#).status == 200)
    #expect(s.run("trim", "--before", "10").code == 0)
    for path in ["/api/events?from=3", "/api/items?at=8", "/api/diff?from=2&to=12", "/api/follow?from=3"] {
      let reply = served.request("GET", path)
      #expect(reply.status == 410 && reply.body.contains("history before seq 10 was trimmed"), "\(path): \(reply)")
    }
    #expect(served.request("GET", "/api/items?at=9").body == items.body)
    let events = served.request("GET", "/api/events")
    #expect(events.status == 200 && events.body.hasPrefix(#"{"seq":10,"#), "\(events)")
    // The server's writes go on after a trim by another process (on
    // PostgreSQL, past what its last write left known).
    #expect(served.request("POST", "/api/append", #"{"text":"after the trim"}"#).status == 200)
    #expect(served.request("POST", "/api/append", #"{"text":"and again"}"#).status == 200)
    #expect(s.run("verify").code == 0)
    let list = s.run("list").stdout
    #expect(list.contains("after the trim\n") && list.hasSuffix("and again\n"), "\(list)")
  }

  /// A UUID is inserted at most once, ever: an item removed before the
  /// horizon keeps its id used — through a repair, an export and import,
  /// and a second trim — and nothing else of it is left to restore (or
  /// erase: that is nothing to do). (The trim deleted its id entry: an append could insert the id
  /// again, and a replica holding the old insert could not pull the new.)
  @Test(arguments: Store.allCases)
  func anItemRemovedBeforeTheHorizonKeepsItsIdUsed(_ store: Store) throws {
    let s = Sandbox(store)
    let ids = history(s)  // m1 removed at 10
    #expect(s.run("trim", "--before", "12").code == 0)
    func refusesItsID(_ s: Sandbox, sourceLocation: SourceLocation = #_sourceLocation) {
      for args in [["append", "--id", ids[0], "again"], ["insert", "0", "again", "--id", ids[0]]] {
        let r = s.run(args)
        #expect(
          r.code == 1 && r.stderr.hasPrefix("msglog: id \(ids[0]) was already used (inserted at seq 1)"), "\(r)",
          sourceLocation: sourceLocation)
      }
    }
    refusesItsID(s)
    // Its base row has a form an older msglog would misread: the database
    // moves on, so that one refuses it (msglog/11, PostgreSQL schema 9).
    switch store {
    case .lmdb:
      let formats = lmdbFormats(of: s.db)
      #expect(formats.stdout.hasPrefix("msglog/11 "), "\(formats)")
    case .postgres:
      let schema = PostgresCluster.psql(
        "SELECT convert_from(value, 'UTF8') FROM msglog.meta WHERE key = 'schema'", database: s.databaseName!)
      #expect(schema.stdout == "9\n", "\(schema)")
    }
    for args in [["restore", ids[0]], ["remove", ids[0]]] {
      let r = s.run(args)
      #expect(r.code == 1 && r.stderr == "msglog: history before seq 12 was trimmed\n", "\(args): \(r)")
    }
    // Its text went with the trim: erasing it is nothing to do (anItemGoneBeforeTheHorizonErasesAsNothing).
    let erase = s.run("erase", ids[0])
    #expect(erase.code == 0 && erase.stderr.hasPrefix("msglog: nothing to erase:"), "\(erase)")
    var r = s.run("restore", String(ids[0].prefix(8)))
    #expect(r.code == 1 && r.stderr.hasPrefix("msglog: no removed item of stream 'main'"), "\(r)")
    #expect(s.run("verify").code == 0)
    let export = s.export()
    #expect(export.contains(#""retired":[{"id":"\#(ids[0])","seq":1,"removed":10}]}"#), "\(export)")

    // A repair rebuilds the id entry from the base row that names it.
    switch store {
    case .lmdb: r = deleteHeadsRow(in: s.db)
    case .postgres:
      r = PostgresCluster.psql("DELETE FROM msglog.ids WHERE id = '\(ids[0])'::uuid", database: s.databaseName!)
    }
    #expect(r.code == 0, "\(r)")
    #expect(s.run("verify").code == 1)
    r = s.run("verify", "--repair")
    #expect(r.code == 0 && s.run("verify").code == 0, "\(r)")
    refusesItsID(s)

    // Exported and imported, the copy keeps it used, byte for byte.
    let copy = Sandbox(store)
    r = copy.run(["import"], stdin: Data(export.utf8))
    #expect(r.code == 0, "\(r)")
    #expect(copy.export() == export)
    #expect(copy.run("verify").code == 0)
    refusesItsID(copy)
    // A base line that retires what no trim could leave is refused whole.
    for (from, to) in [(#""removed":10"#, #""removed":12"#), (#""seq":1,"removed""#, #""seq":10,"removed""#)] {
      let bad = Sandbox(store)
      r = bad.run(["import"], stdin: Data(export.replacingOccurrences(of: from, with: to).utf8))
      #expect(r.code == 1 && r.stderr.contains("retires \(ids[0]) at seqs no trim leaves"), "\(r)")
      #expect(bad.run("log", "--all").stdout.isEmpty)
    }

    // A second trim keeps what the first retired.
    #expect(s.run("trim", "--before", "15").code == 0)
    #expect(s.export().contains(#""retired":[{"id":"\#(ids[0])","seq":1,"removed":10}]}"#))
    #expect(s.run("verify").code == 0)
    refusesItsID(s)
  }

  /// An event kept after the horizon may undo one before it: an import
  /// of the export, and a repair, take it as the log recorded it (both
  /// were refused — "history before seq H was trimmed" — for the event it
  /// undoes is gone, so there is nothing to check it against).
  @Test(arguments: Store.allCases)
  func anUndoOfAnEventBeforeTheHorizon(_ store: Store) throws {
    let s = Sandbox(store)
    s.append("a")
    s.append("b")
    #expect(s.run("undo").code == 0)  // 3: undoes 2
    s.append("c")  // 4
    #expect(s.run("trim", "--before", "3").code == 0)
    let export = s.export()
    #expect(export.contains(#""undoes":2"#), "\(export)")
    let copy = Sandbox(store)
    var r = copy.run(["import"], stdin: Data(export.utf8))
    #expect(r.code == 0, "\(r)")
    #expect(copy.export() == export)
    #expect(copy.run("verify").code == 0)
    switch store {
    case .lmdb: r = deleteHeadsRow(in: s.db)
    case .postgres:
      r = PostgresCluster.psql("DELETE FROM msglog.streams WHERE stream = 'main'::bytea", database: s.databaseName!)
    }
    #expect(r.code == 0, "\(r)")
    r = s.run("verify", "--repair")
    #expect(r.code == 0, "\(r)")
    #expect(s.run("verify").code == 0 && s.export() == export)
  }

  /// `log --follow --from H-1` begins at H, as `log --from H-1` does (it
  /// said the log was corrupted: it looked for H-1's event); below, refused.
  @Test(arguments: Store.allCases)
  func aFollowerFromTheSeqBeforeTheHorizon(_ store: Store) throws {
    let s = Sandbox(store)
    _ = history(s)
    #expect(s.run("trim", "--before", "10").code == 0)
    var r = s.run("log", "--follow", "--from", "9", "--limit", "2", "--all")
    #expect(r.code == 0 && r.lines.map { $0.prefix(3) } == ["10 ", "11 "], "\(r)")
    #expect(r.stdout == s.run("log", "--from", "9", "--limit", "2", "--all").stdout)
    r = s.run("log", "--follow", "--from", "8", "--limit", "2")
    #expect(r.code == 1 && r.stderr.hasPrefix("msglog: history before seq 10 was trimmed"), "\(r)")
  }

  /// A rebase from a version before the horizon is refused as trimmed
  /// history (it said the derived tables disagreed with the log), and
  /// changes nothing; from the base's version or later it goes through.
  @Test(arguments: Store.allCases)
  func aRebaseFromBeforeTheHorizonIsTrimmedHistory(_ store: Store) throws {
    let s = Sandbox(store)
    for text in ["a", "b", "c", "d"] { #expect(s.run("append", text).code == 0) }
    #expect(s.run("trim", "--before", "3").code == 0)
    let before = s.contents()
    for args in [
      ["move", "0", "1", "--expect-version", "1", "--rebase"],
      ["insert", "1", "x", "--expect-version", "0", "--rebase"],
    ] {
      let r = s.run(args)
      #expect(r.code == 1 && r.stderr == "msglog: history before seq 3 was trimmed\n", "\(args): \(r)")
    }
    #expect(s.contents() == before)
    let r = s.run("move", "0", "1", "--expect-version", "2", "--rebase")
    #expect(r.code == 0, "\(r)")
    #expect(s.run("verify").code == 0)
  }

  @Test(arguments: Store.allCases)
  func aDryRunChangesNothing(_ store: Store) throws {
    let s = Sandbox(store)
    _ = history(s)
    let before = s.contents()
    var r = s.run("trim", "--before", "12", "--dry-run")
    #expect(r.code == 0 && r.stdout == "would trim 11 events before seq 12\n", "\(r)")
    r = s.run("trim", "--before", "12", "--dry-run", "--json")
    #expect(r.stdout == #"{"trimmed":11,"horizon":12,"dryRun":true}"# + "\n", "\(r)")
    #expect(s.contents() == before)
    r = s.run("trim", "--before", "12")
    #expect(r.stdout == "trimmed 11 events before seq 12\n", "\(r)")
  }

  /// Through the library: the events taken out of history, and of their
  /// records those deleted (the rest are the texts the bases read).
  @Test(arguments: Store.allCases)
  func theLibraryCountsEventsAndRecords(_ store: Store) throws {
    let s = Sandbox(store)
    _ = history(s)
    let log = try EventLog(s.db)
    // Below 12: all but m1…m6's inserts, the second edit of m2 and o1's insert.
    var trim = try log.trim(before: 12, dryRun: true)
    #expect(trim.trimmed == 11 && trim.recordsDropped == 4 && trim.horizon == 12, "\(trim)")
    // Below 10: only m2's first edit goes.
    trim = try log.trim(before: 10)
    #expect(trim.trimmed == 9 && trim.recordsDropped == 1 && trim.horizon == 10, "\(trim)")
    trim = try log.trim(before: 12)
    #expect(trim.trimmed == 2 && trim.recordsDropped == 3 && trim.horizon == 12, "\(trim)")
    #expect(s.run("verify").code == 0)
  }

  @Test(arguments: Store.allCases)
  func badInputChangesNothing(_ store: Store) throws {
    let s = Sandbox(store)
    _ = history(s)
    let before = s.contents()
    for (args, code, words) in [
      (["trim"], Int32(64), "msglog: trim takes --before SEQ or --older-than DURATION (one of them)"),
      (["trim", "--before", "3", "--older-than", "1d"], 64, "msglog: trim takes --before SEQ or --older-than"),
      (["trim", "--before", "0"], 64, "msglog: invalid --before 0: history begins at seq 1"),
      (["trim", "--before", "x"], 64, "msglog: invalid --before 'x'"),
      (["trim", "--older-than", "soon"], 64, "msglog: invalid --older-than 'soon'"),
      (["trim", "--before", "16"], 1, "msglog: seq 16 is beyond the head of the log (15)"),
    ] {
      let r = s.run(args)
      #expect(r.code == code && r.stderr.hasPrefix(words) && r.stdout.isEmpty, "\(args): \(r)")
    }
    #expect(s.contents() == before)
  }

  /// A stream whose last event before the horizon is one the trim drops
  /// (a remove), with none since: its base vouches for its head, and it
  /// takes writes and undos as ever.
  @Test(arguments: Store.allCases)
  func aStreamQuietSinceTheHorizonTakesWrites(_ store: Store) throws {
    let s = Sandbox(store)
    s.append("q1", stream: "quiet")  // 1
    let q2 = s.append("q2", stream: "quiet")  // 2
    #expect(s.run("remove", q2, "--stream", "quiet").code == 0)  // 3
    s.append("m1")  // 4
    s.append("m2")  // 5
    var r = s.run("trim", "--before", "5")
    #expect(r.code == 0 && r.stdout == "trimmed 4 events before seq 5\n", "\(r)")
    #expect(s.run("verify").code == 0)
    s.append("q3", stream: "quiet")  // 6
    let quiet = s.run("list", "--stream", "quiet").lines
    #expect(quiet.count == 2 && quiet[0].hasSuffix("  -  q1") && quiet[1].hasSuffix("  -  q3"), "\(quiet)")
    r = s.run("undo", "--stream", "quiet")
    #expect(r.code == 0, "\(r)")
    r = s.run("undo", "--stream", "quiet")
    #expect(r.code == 1 && r.stderr.contains("nothing to undo"), "\(r)")
    #expect(s.run("replay", "--stream", "quiet", "--at", "4").stdout == s.run("list", "--stream", "quiet").stdout)
    #expect(s.run("verify").code == 0)
  }

  /// A restore after the horizon of an item removed before it: the item's
  /// row and text must stay, so the horizon comes down to its remove.
  @Test(arguments: Store.allCases)
  func aLaterRestoreBringsTheHorizonDown(_ store: Store) throws {
    let s = Sandbox(store)
    let ids = (1...4).map { s.append("n\($0)") }
    #expect(s.run("remove", ids[0]).code == 0)  // 5
    s.append("n5")  // 6
    #expect(s.run("restore", ids[0]).code == 0)  // 7
    let list = s.run("list").stdout
    var r = s.run("trim", "--before", "7")
    #expect(r.code == 0 && r.stdout == "trimmed 4 events before seq 5\n", "\(r)")
    #expect(r.stderr.contains("trimmed before seq 5, not 7"), "\(r)")
    #expect(s.run("list").stdout == list)
    r = s.run("verify")
    #expect(r.code == 0, "\(r)")
    // Asked again, nothing is left to trim, and the note still says why not 7.
    for dryRun in [[], ["--dry-run"]] {
      r = s.run(["trim", "--before", "7"] + dryRun)
      #expect(r.code == 0 && r.stdout.hasSuffix("0 events before seq 5\n"), "\(r)")
      #expect(
        r.stderr == "msglog: nothing to trim: history begins at seq 5, and cannot begin at 7: "
          + "a later event brings back or erases an item removed before 7\n", "\(r)")
    }
    // Asked at or below the horizon: nothing to explain.
    r = s.run("trim", "--before", "3")
    #expect(r.code == 0 && r.stderr == "msglog: nothing to trim: history begins at seq 5\n", "\(r)")
  }

  /// An item erased, or removed, before the horizon is erased again as
  /// nothing (exit 0, a note): its insert and edits went with the trim, so
  /// no event holds its text. It was refused with "history before seq H
  /// was trimmed", where SPEC has an item erased already change nothing.
  /// It still never comes back.
  @Test(arguments: Store.allCases)
  func anItemGoneBeforeTheHorizonErasesAsNothing(_ store: Store) throws {
    let s = Sandbox(store)
    let erased = s.append("erased, then trimmed")  // 1
    let removed = s.append("removed, then trimmed")  // 2
    #expect(s.run("erase", erased).code == 0)  // 3
    #expect(s.run("remove", removed).code == 0)  // 4
    s.append("kept")  // 5
    var r = s.run("trim", "--before", "5")
    #expect(r.code == 0 && r.stdout == "trimmed 4 events before seq 5\n", "\(r)")
    let export = s.export()
    for id in [erased, removed] {
      r = s.run("erase", id)
      #expect(r.code == 0 && r.stdout.isEmpty, "\(r)")
      #expect(
        r.stderr == "msglog: nothing to erase: the item was erased already "
          + "(or removed before the trimmed history, which took its text)\n", "\(r)")
      r = s.run("--json", "erase", id)
      #expect(r.code == 0 && r.stdout == #"{"erased":[],"events":0}"# + "\n", "\(r)")
      r = s.run("restore", id)
      #expect(r.code == 1 && r.stderr.contains("history before seq 5 was trimmed"), "\(r)")
      // Named in another stream, it is said to be in its own, as a live one is, whatever the command.
      for command in [["erase", id], ["restore", id], ["remove", id], ["edit", id, "x"]] {
        r = s.run(["--stream", "other"] + command)
        #expect(r.code == 1 && r.stderr.hasPrefix("msglog: item \(id) is in stream 'main', not 'other'"), "\(r)")
      }
    }
    #expect(s.export() == export, "erasing nothing changed the log")
    #expect(s.run("verify").code == 0)
  }

  /// An import of base lines that disagree names the line that fails —
  /// the second of two that name one stream or one id, not the first,
  /// which imports well alone — and a base line after an event is said as
  /// such (it was "unknown member items"). Nothing is made.
  @Test(arguments: Store.allCases)
  func importedBasesNameTheLineThatFails(_ store: Store) throws {
    let s = Sandbox(store)
    for n in 1...5 { s.append("m\(n)") }
    #expect(s.run("trim", "--before", "4").code == 0)
    let base = try #require(s.export().split(separator: "\n").first.map(String.init))
    #expect(base.hasPrefix(#"{"op":"base","stream":"main""#), "\(base)")
    let otherStream = base.replacing(#""stream":"main""#, with: #""stream":"zz""#)
    let cases: [(lines: [String], error: String)] = [
      ([base, base], "msglog: line 2: a base line names stream 'main' twice\n"),
      ([base, otherStream], "msglog: line 2: id "),
      (
        [base, #"{"op":"append","text":"a"}"#, otherStream],
        "msglog: line 3: a base line comes before every event: the base lines of a trimmed log's export begin it\n"
      ),
    ]
    for (lines, error) in cases {
      let target = Sandbox(store)
      let r = target.run(["import"], stdin: Data((lines.joined(separator: "\n") + "\n").utf8))
      #expect(r.code == 1 && r.stdout.isEmpty && r.stderr.hasPrefix(error), "\(lines.count) lines: \(r)")
      let list = target.run("list")
      #expect(list.code == 1 && list.stderr.contains(store == .lmdb ? "no database" : "no msglog log"), "\(list)")
    }
  }

  /// --older-than: the first event younger than that, by the events' times.
  @Test(arguments: Store.allCases)
  func olderThanFindsTheFirstYoungerEvent(_ store: Store) throws {
    let s = Sandbox(store)
    let ids = (1...5).map { _ in UUID().uuidString.lowercased() }
    var old = (1...5).map {
      #"{"seq":\#($0),"stream":"main","version":\#($0),"time":"2020-01-0\#($0)T00:00:00.000Z","op":"insert","id":"\#(ids[$0 - 1])","index":\#($0 - 1),"text":"old \#($0)"}"#
    }
    old.append(
      #"{"seq":6,"stream":"main","version":6,"time":"2020-01-06T00:00:00.000Z","op":"remove","id":"\#(ids[0])"}"#)
    var r = s.run(["import"], stdin: Data(old.joined(separator: "\n").utf8))
    #expect(r.code == 0, "\(r)")
    s.append("new")  // 7, now
    r = s.run("trim", "--older-than", "30d")
    // Seqs 1…6 are older: the horizon is 7; the removed item's insert and its remove go.
    #expect(r.code == 0 && r.stdout == "trimmed 6 events before seq 7\n", "\(r)")
    #expect(!s.export().contains("old 1"))
    #expect(s.run("list").lines.count == 5)
    #expect(s.run("verify").code == 0)
  }

  /// What a trim drops is gone from every file of the database after
  /// `purge`: a removed item's text, and the text an edit before the
  /// horizon replaced (its insert stays, for its sender and time).
  @Test func purgeScrubsWhatTrimDropped() throws {
    let s = Sandbox()
    let sentinel = "SENTINEL-" + UUID().uuidString
    // The kept item has a mark of its own: "KEPT-" + the sentinel left the
    // sentinel in the file, and the byte after it is the next field's
    // (random), so searching for the sentinel and a space failed one run
    // in 256.
    let keptMark = "KEPT-" + UUID().uuidString
    let filler = (0..<200).map { "filler \($0)" }.joined(separator: "\n")
    #expect(s.run(["append", "--lines"], stdin: Data(filler.utf8)).code == 0)
    let secret = s.append("\(sentinel) " + String(repeating: "x", count: 3000))
    let kept = s.append(keptMark)
    let editedMark = "EDITED-" + UUID().uuidString
    let edited = s.append("\(sentinel) before its edit", sender: "ann")
    #expect(s.run("edit", edited, editedMark).code == 0)
    #expect(s.run("remove", secret).code == 0)
    #expect(s.run(["append", "--lines"], stdin: Data(filler.utf8)).code == 0)
    let head = 200 + 2 + 2 + 1 + 200
    var r = s.run("trim", "--before", String(head - 10))
    #expect(r.code == 0 && r.stdout == "trimmed \(head - 11) events before seq \(head - 10)\n", "\(r)")
    #expect(!s.export().contains(sentinel), "the trim left the text in the log")
    // The trimmed text is still in the file's free pages: the test can fail.
    #expect(filesHolding(sentinel, in: s.db) == ["data.mdb"])
    r = s.run("purge")
    #expect(r.code == 0, "\(r)")
    #expect(filesHolding(sentinel, in: s.db).isEmpty, "a file still holds the trimmed text")
    // The kept items are still there, the edited one by its author with
    // its new text, and the log verifies and exports as an import of its
    // export makes it.
    #expect(s.run("list").stdout.contains(String(kept.prefix(8)) + "  -  " + keptMark))
    #expect(s.run("list").stdout.contains(String(edited.prefix(8)) + "  ann  " + editedMark))
    #expect(s.run("verify").code == 0)
    let copy = Sandbox()
    #expect(copy.run(["import"], stdin: Data(s.export().utf8)).code == 0)
    #expect(copy.export() == s.export())
    #expect(copy.run("list").stdout == s.run("list").stdout)
  }

  /// `kill -9` during a trim: one transaction, so done whole or not at all.
  @Test func aKilledTrimLeavesALogThatVerifies() throws {
    let s = Sandbox()
    let n = 20_000
    let ids = (0..<n).map { _ in UUID().uuidString.lowercased() }
    var lines = (0..<n).map {
      #"{"seq":\#($0 + 1),"stream":"main","version":\#($0 + 1),"time":"2026-01-01T00:00:00.000Z","op":"insert","id":"\#(ids[$0])","index":\#($0),"text":"line \#($0)"}"#
    }
    lines += (0..<5_000).map {
      #"{"seq":\#(n + $0 + 1),"stream":"main","version":\#(n + $0 + 1),"time":"2026-01-01T00:00:00.000Z","op":"remove","id":"\#(ids[$0])"}"#
    }
    var r = s.run(["import"], stdin: Data(lines.joined(separator: "\n").utf8))
    #expect(r.code == 0, "\(r)")
    let list = s.run("list").stdout
    for delay in [UInt32(0), 20_000, 80_000] {
      let trim = s.start(["trim", "--before", "24000"])
      usleep(delay)
      kill(trim.process.processIdentifier, SIGKILL)
      _ = trim.finish()
      r = s.run("verify")
      #expect(r.code == 0, "\(r)")
      #expect(s.run("list").stdout == list)
    }
    r = s.run("trim", "--before", "24000")
    #expect(r.code == 0, "\(r)")
    r = s.run("verify")
    #expect(r.code == 0, "\(r)")
    #expect(s.run("list").stdout == list)
  }

  /// The PostgreSQL schema's version (`msglog.meta`'s `schema` row).
  private func schema(of s: Sandbox) -> String {
    let r = PostgresCluster.psql(
      "SELECT convert_from(value, 'UTF8') FROM msglog.meta WHERE key = 'schema'", database: s.databaseName!)
    return r.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
  }
}
