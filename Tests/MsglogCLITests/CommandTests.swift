import Foundation
import MsglogTestSupport
import Testing

/// Every command of docs/REFERENCE.md's table on the built binary: exact stdout, stderr and exit code.
@Suite struct CommandTests {
  let ids = (1...6).map { String(format: "%08x-0000-4000-8000-000000000000", 0xa0 + $0) }

  /// A tour: append, insert, move, remove, list, replay --at, log, streams, verify.
  @Test(arguments: Store.allCases) func tour(_ store: Store) {
    let s = Sandbox(store)
    var r = s.run(["append", "--sender", "ann", "--id", ids[0], "hello", "there"])
    #expect(r.code == 0 && r.stdout == ids[0] + "\n" && r.stderr.isEmpty, "\(r)")
    r = s.run(["--id=\(ids[1].uppercased())", "append", "--", "-second"])
    #expect(r.stdout == ids[1] + "\n", "\(r)")
    r = s.run(["insert", "0", "--id", ids[2], "first", "--sender=bob"])
    #expect(r.stdout == ids[2] + "\n", "\(r)")
    r = s.run("list")
    #expect(
      r.stdout == """
        0  000000a3  bob  first
        1  000000a1  ann  hello there
        2  000000a2  -  -second

        """, "\(r)")
    r = s.run("move", "0", "2")
    #expect(r.code == 0 && r.stdout == "moved \(ids[2]) 0 -> 2\n", "\(r)")
    r = s.run("remove", "000000A1")
    #expect(r.code == 0 && r.stdout == "removed \(ids[0])\n", "\(r)")
    r = s.run("list")
    #expect(r.stdout == "0  000000a2  -  -second\n1  000000a3  bob  first\n", "\(r)")
    r = s.run("replay", "--at", "3")
    #expect(r.stdout == "0  000000a3  bob  first\n1  000000a1  ann  hello there\n2  000000a2  -  -second\n", "\(r)")
    #expect(s.run("replay").stdout == s.run("list").stdout)
    #expect(s.run("replay", "--at", "0").stdout == "")
    r = s.run("log")
    #expect(
      maskingTimes(r.stdout) == """
        1  TIME  main  v1  insert  \(ids[0])  at 0  ann  hello there
        2  TIME  main  v2  insert  \(ids[1])  at 1  -  -second
        3  TIME  main  v3  insert  \(ids[2])  at 0  bob  first
        4  TIME  main  v4  move  \(ids[2])  0 -> 2
        5  TIME  main  v5  remove  \(ids[0])

        """, "\(r)")
    r = s.run("log", "--from", "2", "--limit", "2")
    #expect(r.lines.map { String($0.prefix(2)) } == ["2 ", "3 "], "\(r)")
    r = s.run("streams")
    #expect(r.stdout == "STREAM  ITEMS  VERSION  SEQ\nmain        2        5    5\n", "\(r)")
    r = s.run("verify")
    #expect(r.code == 0 && r.stdout == "ok: 5 events, 1 stream, 2 live items\n", "\(r)")
  }

  @Test(arguments: Store.allCases) func jsonShapes(_ store: Store) {
    let s = Sandbox(store)
    var r = s.run(["--json", "append", "--id", ids[0], "--sender", "ann", "hi"])
    #expect(
      maskingTimes(r.stdout) == #"{"seq":1,"stream":"main","version":1,"time":"TIME","id":"\#(ids[0])","index":0}"#
        + "\n",
      "\(r)")
    r = s.run(["insert", "0", "--json", "--id", ids[1], "yo"])
    #expect(
      maskingTimes(r.stdout) == #"{"seq":2,"stream":"main","version":2,"time":"TIME","id":"\#(ids[1])","index":0}"#
        + "\n",
      "\(r)")
    r = s.run(["move", "1", "0", "--json"])
    #expect(
      maskingTimes(r.stdout)
        == #"{"seq":3,"stream":"main","version":3,"time":"TIME","id":"\#(ids[0])","from":1,"to":0}"# + "\n", "\(r)")
    r = s.run(["list", "--json"])
    #expect(
      maskingTimes(r.stdout)
        == #"{"stream":"main","seq":3,"version":3,"count":2,"items":[{"index":0,"id":"\#(ids[0])","text":"hi","sender":"ann","time":"TIME","seq":1},{"index":1,"id":"\#(ids[1])","text":"yo","time":"TIME","seq":2}]}"#
        + "\n", "\(r)")
    #expect(s.run(["replay", "--json"]).stdout == r.stdout)
    #expect(s.run(["replay", "--json", "--at", "3"]).stdout == r.stdout)
    r = s.run(["remove", ids[1], "--json"])
    #expect(
      maskingTimes(r.stdout) == #"{"seq":4,"stream":"main","version":4,"time":"TIME","id":"\#(ids[1])","index":1}"#
        + "\n",
      "\(r)")
    // The time a write prints is the time the log records.
    let logged = s.run(["log", "--json", "--from", "4"]).stdout
    #expect(logged.contains(String(r.stdout.split(separator: ",")[3])), "\(logged)")
    r = s.run(["log", "--json"])
    #expect(
      maskingTimes(r.stdout) == """
        {"seq":1,"stream":"main","version":1,"time":"TIME","op":"insert","id":"\(ids[0])","index":0,"text":"hi","sender":"ann"}
        {"seq":2,"stream":"main","version":2,"time":"TIME","op":"insert","id":"\(ids[1])","index":0,"text":"yo"}
        {"seq":3,"stream":"main","version":3,"time":"TIME","op":"move","id":"\(ids[0])","from":1,"to":0}
        {"seq":4,"stream":"main","version":4,"time":"TIME","op":"remove","id":"\(ids[1])"}

        """, "\(r)")
    #expect(s.run(["export"]).stdout == r.stdout)
    r = s.run(["streams", "--json"])
    #expect(r.stdout == #"{"streams":[{"stream":"main","count":1,"version":4,"seq":4}]}"# + "\n", "\(r)")
    r = s.run(["verify", "--json"])
    #expect(r.stdout == #"{"ok":true,"events":4,"streams":1,"items":1,"problems":[]}"# + "\n", "\(r)")
    r = s.run(["replay", "--at", "0", "--json", "--stream", "later"])
    #expect(r.stdout == #"{"stream":"later","seq":0,"version":0,"count":0,"items":[]}"# + "\n", "\(r)")
  }

  @Test(arguments: Store.allCases) func streamsAreSeparateAndChosenByOptionOrEnvironment(_ store: Store) {
    let s = Sandbox(store)
    s.append("in main")
    s.append("in standup", stream: "standup")
    var r = s.run(["list"], environment: ["MSGLOG_STREAM": "standup"])
    #expect(r.lines.count == 1 && r.stdout.hasSuffix("in standup\n"), "\(r)")
    r = s.run(["list", "--stream", "main"], environment: ["MSGLOG_STREAM": "standup"])
    #expect(r.stdout.hasSuffix("in main\n"), "\(r)")
    r = s.run("list", "--stream", "nobody")
    #expect(r.code == 0 && r.stdout.isEmpty, "\(r)")
    r = s.run("log", "--all")
    #expect(r.lines.count == 2, "\(r)")
    #expect(s.run("log", "--stream", "standup").lines.count == 1)
    r = s.run("streams")
    #expect(
      r.stdout == "STREAM   ITEMS  VERSION  SEQ\nmain         1        1    1\nstandup      1        1    2\n", "\(r)")
    // A stream that did not exist yet at a seq replays as empty.
    r = s.run("replay", "--stream", "standup", "--at", "1")
    #expect(r.code == 0 && r.stdout.isEmpty, "\(r)")
  }

  @Test(arguments: Store.allCases) func textComesFromArgumentsOrStdin(_ store: Store) {
    let s = Sandbox(store)
    var r = s.run(["append"], stdin: Data("from stdin\n".utf8))
    #expect(r.code == 0, "\(r)")
    r = s.run(["append"], stdin: Data("two lines\nkept\n\n".utf8))
    #expect(r.code == 0, "\(r)")
    r = s.run(["append", "--lines"], stdin: Data("one\r\n\n  \ntwo\nthree".utf8))
    #expect(r.code == 0 && r.lines.count == 3, "\(r)")
    r = s.run(["insert", "1", "--lines", "--json"], stdin: Data("a\nb\n".utf8))
    #expect(r.lines.count == 2 && r.lines[1].hasSuffix(#""index":2}"#), "\(r)")
    r = s.run("list", "--json")
    let texts = (try? JSONSerialization.jsonObject(with: Data(r.stdout.utf8)) as? [String: Any])
      .flatMap { $0["items"] as? [[String: Any]] }?.compactMap { $0["text"] as? String }
    #expect(texts == ["from stdin", "a", "b", "two lines\nkept\n", "one", "two", "three"], "\(r)")
    r = s.run("list")
    #expect(r.lines[3] == "3  " + r.lines[3].dropFirst(3).prefix(8) + "  -  two lines\\nkept\\n", "\(r)")
  }

  @Test(arguments: Store.allCases) func controlCharactersNeverReachTheTerminal(_ store: Store) {
    let s = Sandbox(store)
    s.append("\u{1B}[2Jgotcha\u{7}\ttab\\ \u{85}\u{2028}", sender: "e\nvil")
    var r = s.run("list")
    #expect(r.stdout.hasSuffix("  e\\nvil  \\x1b[2Jgotcha\\x07\\ttab\\\\ \\u{0085}\\u{2028}\n"), "\(r)")
    #expect(r.lines.count == 1)
    r = s.run("list", "--json")
    #expect(r.stdout.contains(#""text":"\u001b[2Jgotcha\u0007\ttab\\ \#u{85}\#u{2028}","sender":"e\nvil""#), "\(r)")
    r = s.run("log")
    #expect(r.lines.count == 1 && !r.stdout.contains("\u{1B}"), "\(r)")
  }

  /// Bidirectional overrides print escaped everywhere text is shown, and
  /// the streams table aligns wide characters by the columns they take.
  @Test(arguments: Store.allCases) func textThatReordersALineIsEscapedAndWideNamesAlign(_ store: Store) {
    let s = Sandbox(store)
    let evil = "invoice\u{202E}fdp.exe"
    #expect(s.run(["append", "--stream", "中文", "--sender", "a\u{2066}b", evil]).code == 0)
    #expect(s.run(["append", "--stream", "ab", "x"]).code == 0)
    var r = s.run(["list", "--stream", "中文"])
    #expect(r.stdout.hasSuffix("  a\\u{2066}b  invoice\\u{202e}fdp.exe\n"), "\(r)")
    r = s.run(["log", "--all"])
    #expect(
      !r.stdout.unicodeScalars.contains {
        (0x202A...0x202E).contains($0.value) || (0x2066...0x2069).contains($0.value)
      }, "\(r)")
    r = s.run(["streams"])
    #expect(r.stdout == "STREAM  ITEMS  VERSION  SEQ\nab          1        1    2\n中文        1        1    1\n", "\(r)")
    // A shell's completion menu prints its candidates raw: a name that
    // would reorder the prompt is not one (it was printed as it is).
    #expect(s.run(["append", "--stream", "to\u{202E}do", "x"]).code == 0)
    r = s.run(["completions", "--list-streams"])
    #expect(r.code == 0 && r.stdout == "ab\n中文\n", "\(r)")
    // JSON stays exact.
    r = s.run(["list", "--json", "--stream", "中文"])
    #expect(r.stdout.contains("\"text\":\"\(evil)\""), "\(r)")
  }

  /// `MSGLOG_DB`, `MSGLOG_STREAM` or `MSGLOG_TOKEN` that is not UTF-8 is
  /// refused by the command that reads it (exit 64), where it was decoded
  /// into another name (`a\u{FFFD}b`: a stream, a directory the user never
  /// named); a command that does not read it runs.
  @Test func aVariableThatIsNotUTF8IsRefusedWhereItIsRead() throws {
    let s = Sandbox(.lmdb)
    for name in ["MSGLOG_DB", "MSGLOG_STREAM", "MSGLOG_TOKEN"] {
      let runner = s.dir + "/with-\(name)"
      try "#!/bin/sh\n\(name)=\"$(printf 'a\\377b')\" exec '\(Sandbox.binary)' \"$@\"\n".write(
        toFile: runner, atomically: true, encoding: .utf8)
      chmod(runner, 0o755)
      let args = name == "MSGLOG_TOKEN" ? ["sync"] : ["append", "x"]
      let r = s.run(args, runner: runner)
      #expect(r.code == 64 && r.stderr.hasPrefix("msglog: \(name) is not valid UTF-8"), "\(name): \(r)")
      #expect(s.run(["--version"], runner: runner).code == 0)
    }
    #expect(s.run(["append", "--stream", "room", "x"], environment: ["MSGLOG_STREAM": "a\tb"]).code == 0)
    let r = s.run(["list"], environment: ["MSGLOG_STREAM": "a\tb"])
    #expect(r.code == 64 && r.stderr.hasPrefix("msglog: MSGLOG_STREAM: stream name 'a\\tb' contains"), "\(r)")
    #expect(s.run(["streams"]).stdout == "STREAM  ITEMS  VERSION  SEQ\nroom        1        1    1\n")
  }

  /// An --expect-version the stream has not reached is no one else's
  /// change: the hint says so (it said someone else changed it).
  @Test func aVersionAheadOfTheStreamIsNotSomeoneElsesChange() {
    let s = Sandbox(.lmdb)
    #expect(s.run("append", "a").code == 0)
    #expect(s.run("append", "b").code == 0)
    var r = s.run("append", "--expect-version", "9", "c")
    #expect(
      r.stderr == "msglog: stream 'main' is at version 2, not 9\n"
        + "hint: the stream is not at that version yet: 'msglog list --json' says the version it is at\n", "\(r)")
    r = s.run("append", "--expect-version", "1", "c")
    #expect(r.stderr.hasSuffix("hint: someone else changed it; re-read with 'msglog list' and retry\n"), "\(r)")
  }

  /// Numbers with any number of leading zeros, a CRLF line end on stdin, a
  /// byte-order mark before an import file, one stream's export.
  @Test(arguments: Store.allCases) func smallContractDetails(_ store: Store) throws {
    let s = Sandbox(store)
    var r = s.run(["append"], stdin: Data("hi\r\n".utf8))
    #expect(r.code == 0, "\(r)")
    r = s.run(["list", "--json"])
    #expect(r.stdout.contains(#""text":"hi","#), "\(r)")
    r = s.run(["replay", "--at", "00000000000000000000000001"])
    #expect(r.code == 0 && r.lines.count == 1, "\(r)")
    let bom: [UInt8] = [0xEF, 0xBB, 0xBF]
    r = s.run(["import"], stdin: Data(bom + Array(#"{"op":"append","stream":"other","text":"after a BOM"}"#.utf8)))
    #expect(r.code == 0, "\(r)")
    #expect(s.run(["append", "--stream", "other", "second"]).code == 0)
    r = s.run(["export", "--stream", "other"])
    #expect(r.lines.count == 2 && r.lines.allSatisfy { $0.contains(#""stream":"other""#) }, "\(r)")
    // MSGLOG_STREAM does not narrow a backup: only an explicit --stream does.
    #expect(s.run(["export"], environment: ["MSGLOG_STREAM": "other"]).lines.count == 3)
    // And its help says so (it said "default: $MSGLOG_STREAM, else main").
    let help = s.run(["help", "export"])
    #expect(help.stdout.contains("--stream NAME  only this stream's events (default: every stream; MSGLOG_STREAM"))
    let copy = Sandbox(store)
    #expect(copy.run(["import"], stdin: Data(r.stdout.utf8)).code == 0)
    #expect(copy.run(["list", "--stream", "other"]).stdout == s.run(["list", "--stream", "other"]).stdout)
    r = s.run(["--sender=--json", "append", "dashing"])
    #expect(r.code == 0, "\(r)")
    #expect(s.run(["list"]).stdout.hasSuffix("  --json  dashing\n"))
  }

  /// On a terminal, a long `append --lines` shows a progress bar that says
  /// what it does. `script` gives the command a real pseudo-terminal.
  @Test func appendLinesProgressSaysAppending() throws {
    let s = Sandbox()
    let file = s.dir + "/lines.txt"
    try (0..<25_000).map { "line \($0)" }.joined(separator: "\n").write(toFile: file, atomically: true, encoding: .utf8)
    let r = s.run(
      ["-qec", "\(Sandbox.binary) --db \(s.db) append --lines < \(file) > /dev/null", "/dev/null"],
      runner: "/usr/bin/script")
    #expect(r.code == 0, "\(r)")
    #expect(r.stdout.contains("appending [") && !r.stdout.contains("importing"), "\(r.stdout.suffix(300))")
  }

  @Test(arguments: Store.allCases) func moveOntoItselfIsANoOp(_ store: Store) {
    let s = Sandbox(store)
    s.append("a")
    s.append("b")
    for json in [false, true] {
      let r = s.run(["move", "1", "1"] + (json ? ["--json"] : []))
      // Text mode: nothing on stdout; --json: serve's document (issue 26 item 6).
      #expect(
        r.code == 0 && r.stdout == (json ? "{\"moved\":false}\n" : "")
          && r.stderr == "msglog: nothing to do: the item is already at index 1\n", "\(r)"
      )
    }
    #expect(s.run("log").lines.count == 2)
  }

  @Test(arguments: Store.allCases) func expectVersionGuardsEveryWrite(_ store: Store) {
    let s = Sandbox(store)
    s.append("a")
    s.append("b")
    let before = s.export()
    for args in [
      ["append", "x"], ["insert", "0", "x"], ["move", "0", "1"],
      ["remove", s.run("list").lines[0].split(separator: " ")[1].description],
    ] {
      let r = s.run(args + ["--expect-version", "1"])
      #expect(r.code == 75, "\(args): \(r)")
      #expect(r.stderr.hasPrefix("msglog: stream 'main' is at version 2, not 1\n"), "\(r)")
    }
    #expect(s.export() == before)
    #expect(s.run(["move", "0", "1", "--expect-version=2"]).code == 0)
  }

  @Test func helpAndVersion() {
    let s = Sandbox()
    for args in [["--help"], ["-h"], ["help"]] {
      let r = s.run(args)
      #expect(r.code == 0 && r.stdout.hasPrefix("USAGE: msglog [--db PATH]") && r.stderr.isEmpty, "\(args)")
    }
    for command in [
      "append", "insert", "move", "remove", "list", "replay", "log", "streams", "export", "import", "verify", "help",
    ] {
      let r = s.run("help", command)
      #expect(r.code == 0, "\(command)")
      for section in ["USAGE: msglog \(command)", "\nOVERVIEW: ", "\nOPTIONS:\n", "\nEXAMPLE:\n  msglog "] {
        #expect(r.stdout.contains(section), "\(command) lacks \(section)")
      }
      #expect(s.run(command, "--help").stdout == r.stdout)
      #expect(s.run(command, "-h").stdout == r.stdout)
    }
    let r = s.run("--version")
    #expect(r.code == 0 && r.stdout.hasPrefix("msglog ") && r.stderr.isEmpty, "\(r)")
    #expect(!FileManager.default.fileExists(atPath: s.db))
  }

  @Test(arguments: Store.allCases) func exportImportRebuildsTheSameLog(_ store: Store) {
    let s = Sandbox(store)
    s.append("a", sender: "ann")
    s.append("b", stream: "other")
    s.append("c")
    #expect(s.run("move", "1", "0").code == 0)
    #expect(s.run("remove", s.run("list").lines[0].split(separator: " ")[1].description).code == 0)
    let exported = s.export()
    // Into the other store: a log moves between LMDB and PostgreSQL unchanged.
    let other = Sandbox(store == .lmdb ? .postgres : .lmdb)
    let copy = other.db
    var r = s.run(["--db", copy, "import"], stdin: Data(exported.utf8))
    #expect(r.code == 0 && r.stdout == "imported 5 events; the head is seq 5\n", "\(r)")
    r = s.run(["--db", copy, "export"])
    #expect(r.stdout == exported, "\(r)")
    for stream in ["main", "other"] {
      #expect(
        s.run(["--db", copy, "list", "--json", "--stream", stream]).stdout
          == s.run(["list", "--json", "--stream", stream]).stdout)
    }
    r = s.run(["--db", copy, "verify"])
    #expect(r.code == 0, "\(r)")
  }

  @Test(arguments: Store.allCases) func importIsAllOrNothing(_ store: Store) {
    let s = Sandbox(store)
    s.append("existing")
    let before = s.export()
    let input = """
      {"op":"append","text":"one"}

      {"op":"append","text":"two","stream":"x"}
      {"op":"insert","index":9,"text":"three"}

      """
    var r = s.run(["import"], stdin: Data(input.utf8))
    #expect(r.code == 1 && r.stdout.isEmpty, "\(r)")
    #expect(r.stderr.hasPrefix("msglog: line 4: index 9 is out of range"), "\(r)")
    #expect(s.export() == before)
    r = s.run(
      ["import"], stdin: Data("{\"op\":\"append\",\"text\":\"ok\"}\n{\"op\":\"append\",\"txt\":\"typo\"}\n".utf8))
    #expect(r.code == 1 && r.stderr.hasPrefix("msglog: line 2: unknown member \"txt\""), "\(r)")
    #expect(s.export() == before)
    r = s.run("import", s.dir + "/missing.jsonl")
    #expect(r.code == 1 && r.stderr.hasPrefix("msglog: cannot read"), "\(r)")
    // A fresh database is not created by a refused import.
    let fresh = Sandbox(store)
    r = fresh.run(["import"], stdin: Data("{\"op\":\"remove\",\"id\":\"\(ids[0])\"}\n".utf8))
    #expect(r.code == 1 && fresh.isEmpty, "\(r)")
    r = s.run(
      ["import", "--json"],
      stdin: Data("{\"op\":\"move\",\"from\":0,\"to\":0}\n{\"op\":\"append\",\"text\":\"new\"}\n".utf8))
    #expect(r.code == 0 && r.stdout == #"{"imported":1,"seq":2}"# + "\n", "\(r)")
    r = s.run(["import", "--json"], stdin: Data(#"{"op":"move","from":1,"to":1}"#.utf8))
    #expect(r.code == 0 && r.stdout == #"{"imported":0,"seq":2}"# + "\n", "\(r)")
  }

  /// The scenarios msglog comes from, each checked against an expected list
  /// computed by an independent model (Fixtures/make-fixtures.py).
  @Test(arguments: ["chat", "colour-board", "form-cards"])
  func scenario(_ name: String) throws {
    let s = Sandbox()
    let copy = s.dir + "/\(name).jsonl"
    try FileManager.default.copyItem(atPath: fixture(name + ".jsonl"), toPath: copy)
    let expected = try String(contentsOfFile: fixture(name + ".expected.json"), encoding: .utf8)
    var r = s.run("import", copy)
    #expect(r.code == 0, "\(r)")
    r = s.run("list", "--json")
    #expect(r.stdout == expected, "\(r)")
    // Still in that order after a full replay (each run reopens the database).
    #expect(s.run("replay", "--json").stdout == expected)
    #expect(s.run("verify").code == 0)
  }
}

/// docs/FORMAT.md is precise enough for a third-party client: a reader that
/// uses only Python's lmdb module (scripts/decode-log.py) prints exactly what
/// `msglog export` prints.
@Suite struct FormatDocumentTests {
  @Test func aPythonReaderDecodesTheLogAsExportDoes() throws {
    let s = Sandbox()
    s.append("plain", sender: "ann")
    s.append("tab\there \"quoted\" \\ \u{1} é 👋🏽 \u{2028}")
    s.append("other stream", stream: "日本")
    #expect(s.run("move", "1", "0").code == 0)
    #expect(s.run("remove", s.run("list").lines[0].split(separator: " ")[1].description).code == 0)
    // Formats 5 and 6, and framed bodies erased and unsigned.
    let kept = s.append("kept", sender: "ann")
    #expect(s.run("edit", kept, "--sender", "eve", "kept, fixed by eve").code == 0)
    let gone = s.append("gone", sender: "eve")
    #expect(s.run("erase", "--sender", "eve").code == 0)
    #expect(s.run("erase", gone).code == 0)
    let script = URL(fileURLWithPath: fixture("")).deletingLastPathComponent().appendingPathComponent(
      "scripts/decode-log.py"
    ).path
    let process = Process()
    process.executableURL = URL(fileURLWithPath: "/usr/bin/python3")
    process.arguments = [script, s.db]
    let out = s.dir + "/decoded.jsonl"
    _ = FileManager.default.createFile(atPath: out, contents: nil)
    process.standardOutput = FileHandle(forWritingAtPath: out)
    try process.run()
    process.waitUntilExit()
    #expect(process.terminationStatus == 0, "scripts/setup --test installs python3-lmdb")
    #expect(try String(contentsOfFile: out, encoding: .utf8) == s.export())
  }
}
