import Foundation
import MsglogTestSupport
import Testing

/// The bad-input catalogue: every usage and refusal class of docs/REFERENCE.md gives
/// its exit code, one `msglog: ` message on stderr, nothing on stdout, and
/// leaves the database byte for byte as it was.
@Suite struct BadInputTests {
  struct Case: CustomStringConvertible, Sendable {
    var args: [String]
    var stdin: [UInt8] = []
    var code: Int32
    var message: String
    var description: String { args.joined(separator: " ") }
  }

  static let live = "0000aaaa-0000-4000-8000-000000000001"
  static let twin = "0000aaaa-0000-4000-8000-000000000002"
  static let removed = "0000bbbb-0000-4000-8000-000000000003"
  static let elsewhere = "0000cccc-0000-4000-8000-000000000004"

  /// Two live items sharing an 8-character prefix, one removed, one in another stream.
  static func seeded(_ store: Store) -> Sandbox {
    let s = Sandbox(store)
    for (id, stream) in [(live, "main"), (twin, "main"), (removed, "main"), (elsewhere, "other")] {
      #expect(s.run(["append", "--id", id, "--stream", stream, "text of \(id.prefix(8))"]).code == 0)
    }
    #expect(s.run(["remove", removed]).code == 0)
    return s
  }

  static let cases: [Case] = [
    // usage (64)
    Case(args: [], code: 64, message: "no command given"),
    Case(args: ["frobnicate"], code: 64, message: "unknown command 'frobnicate'"),
    Case(args: ["list", "--colour"], code: 64, message: "unknown option '--colour'"),
    Case(args: ["list", "-x"], code: 64, message: "unknown option '-x'"),
    Case(args: ["list", "--sender", "ann"], code: 64, message: "option --sender does not apply to 'list'"),
    Case(args: ["list", "extra"], code: 64, message: "unexpected argument 'extra' for 'list'"),
    Case(args: ["list", "--json=yes"], code: 64, message: "option --json takes no value"),
    Case(args: ["append", "a", "--sender"], code: 64, message: "option --sender needs a value"),
    Case(
      args: ["append", "--sender", "a", "--sender", "b", "x"], code: 64,
      message: "option --sender is given more than once"),
    Case(args: ["move", "1"], code: 64, message: "'move' needs TO"),
    Case(args: ["insert"], code: 64, message: "'insert' needs INDEX"),
    Case(args: ["remove"], code: 64, message: "'remove' needs ID"),
    Case(args: ["move", "a", "1"], code: 64, message: "invalid FROM index 'a'"),
    Case(args: ["move", "a", "b"], code: 64, message: "invalid FROM index 'a'"),
    Case(args: ["move", "-1", "1"], code: 64, message: "invalid FROM index '-1'"),
    Case(args: ["move", "+1", "1"], code: 64, message: "invalid FROM index '+1'"),
    Case(args: ["move", "0", "9223372036854775808"], code: 64, message: "invalid TO index '9223372036854775808'"),
    Case(args: ["insert", "1.5", "x"], code: 64, message: "invalid index '1.5'"),
    Case(args: ["replay", "--at", "x"], code: 64, message: "invalid --at 'x'"),
    Case(args: ["log", "--limit", "-3"], code: 64, message: "invalid --limit '-3'"),
    Case(args: ["append", "--expect-version", "v1", "x"], code: 64, message: "invalid --expect-version 'v1'"),
    Case(args: ["remove", "0000aaa"], code: 64, message: "id prefix '0000aaa' is too short"),
    Case(args: ["remove", "zzzzzzzz"], code: 64, message: "malformed id 'zzzzzzzz'"),
    Case(args: ["append", "--id", "not-a-uuid", "x"], code: 64, message: "malformed id 'not-a-uuid': expected a UUID"),
    Case(args: ["append", ""], code: 64, message: "message text is empty"),
    Case(args: ["append"], stdin: Array("\n".utf8), code: 64, message: "message text is empty"),
    Case(args: ["append"], stdin: [0x68, 0xFF, 0x69], code: 64, message: "the message on stdin is not valid UTF-8"),
    Case(
      args: ["append", "--lines"], stdin: [0x6F, 0x6B, 0x0A, 0xC3, 0x28, 0x0A], code: 64,
      message: "line 2 of stdin is not valid UTF-8"),
    Case(
      args: ["append"], stdin: Array(repeating: 0x61, count: (1 << 20) + 1), code: 64,
      message: "message text is 1048577 bytes; the limit is 1048576"),
    Case(
      args: ["append", "--lines"], stdin: Array("ok\n".utf8) + Array(repeating: 0x61, count: (1 << 20) + 1), code: 64,
      message: "line 2: message text is 1048577 bytes; the limit is 1048576"),
    Case(
      args: ["insert", "0", "--lines"], stdin: Array(repeating: 0x61, count: (1 << 20) + 1), code: 64,
      message: "line 1: message text is 1048577 bytes; the limit is 1048576"),
    Case(
      args: ["append", "--lines"], stdin: Array("\n  \r\n".utf8), code: 64, message: "--lines found no message on stdin"
    ),
    Case(
      args: ["append", "--lines", "x"], code: 64,
      message: "--lines reads messages from stdin; it takes no TEXT arguments"),
    Case(args: ["append", "--sender", "", "x"], code: 64, message: "sender is empty"),
    Case(args: ["append", "--stream", "", "x"], code: 64, message: "stream name is empty"),
    Case(
      args: ["append", "--stream", "a\u{1}b", "x"], code: 64,
      message: "stream name 'a\\x01b' contains a control character"),
    Case(
      args: ["append", "--stream", String(repeating: "s", count: 201), "x"], code: 64,
      message: "stream name is 201 bytes"),
    Case(args: ["help", "frobnicate"], code: 64, message: "no help for unknown command 'frobnicate'"),
    Case(
      args: ["append", "--sender", "--json", "hi"], code: 64,
      message: "option --sender needs a value, but '--json' is an option"),
    Case(
      args: ["append", "--stream", "-h", "hi"], code: 64,
      message: "option --stream needs a value, but '-h' is an option"),
    Case(
      args: ["replay", "--at", "--json"], code: 64, message: "option --at needs a value, but '--json' is an option"),
    Case(args: ["streams", "--stream", "main"], code: 64, message: "option --stream does not apply to 'streams'"),
    Case(args: ["verify", "--stream", "main"], code: 64, message: "option --stream does not apply to 'verify'"),
    Case(args: ["help", "--sender", "x"], code: 64, message: "option --sender does not apply to 'help'"),
    Case(args: ["completions", "bash", "--all"], code: 64, message: "option --all does not apply to 'completions'"),
    Case(args: ["log", "--all", "--stream", "main"], code: 64, message: "--all and --stream exclude each other"),
    Case(args: ["replay", "--at", "000000000000000000009223372036854775808"], code: 64, message: "invalid --at"),
    Case(
      args: ["import"], stdin: Array(#"{"op":"append","text":"x","from":1}"#.utf8), code: 1,
      message: "line 1: an append takes no \"from\""),
    Case(
      args: ["import"], stdin: Array(#"{"op":"insert","index":0}"#.utf8), code: 1,
      message: "line 1: an insert needs \"text\""),
    // refused (1)
    Case(
      args: ["insert", "3", "x"], code: 1,
      message: "index 3 is out of range: stream 'main' has 2 items, so the index can be 0…2"),
    Case(args: ["move", "2", "0"], code: 1, message: "from index 2 is out of range"),
    Case(args: ["move", "0", "2"], code: 1, message: "to index 2 is out of range"),
    Case(
      args: ["move", "0", "0", "--stream", "empty"], code: 1, message: "cannot move in stream 'empty': it has no items"),
    Case(
      args: ["remove", "0000dddd-0000-4000-8000-000000000009"], code: 1,
      message: "no item with id 0000dddd-0000-4000-8000-000000000009 in stream 'main'"),
    Case(args: ["remove", removed], code: 1, message: "item \(removed) was already removed (at seq 5)"),
    Case(args: ["remove", elsewhere], code: 1, message: "item \(elsewhere) is in stream 'other', not 'main'"),
    // Another stream's removed item: where it is comes first (a restore here would fail on it too).
    Case(
      args: ["remove", removed, "--stream", "other"], code: 1,
      message: "item \(removed) is in stream 'main', not 'other'"),
    Case(args: ["remove", "0000aaaa"], code: 1, message: "id prefix 0000aaaa is ambiguous in stream 'main'"),
    Case(args: ["remove", "0000eeee"], code: 1, message: "no item in stream 'main' has an id starting with 0000eeee"),
    // A removed item's prefix says what its full id says.
    Case(args: ["remove", "0000bbbb"], code: 1, message: "item \(removed) was already removed (at seq 5)"),
    Case(
      args: ["append", "--id", removed, "again"], code: 1, message: "id \(removed) was already used (inserted at seq 3)"
    ),
    Case(
      args: ["append", "--id", live.uppercased(), "again"], code: 1,
      message: "id \(live) was already used (inserted at seq 1)"),
    Case(args: ["replay", "--at", "6"], code: 1, message: "seq 6 is beyond the head of the log (5)"),
    Case(
      args: ["import"], stdin: Array("{\"op\":\"append\",\"text\":\"a\"}\nnot json\n".utf8), code: 1,
      message: "line 2: invalid JSON at byte 2: invalid literal"),
    Case(
      args: ["import", "/nonexistent/file.jsonl"], code: 1, message: "cannot read /nonexistent/file.jsonl: no such file"
    ),
    // conflict (75)
    Case(args: ["append", "--expect-version", "0", "x"], code: 75, message: "stream 'main' is at version 4, not 0"),
    Case(args: ["move", "0", "1", "--expect-version", "5"], code: 75, message: "stream 'main' is at version 4, not 5"),
    // A request's own values before the version: a conflict tells a script
    // to read again and retry, which could only end in the same refusal.
    Case(args: ["append", "--expect-version", "0", ""], code: 64, message: "message text is empty"),
    Case(args: ["insert", "0", "--expect-version", "9", ""], code: 64, message: "message text is empty"),
    Case(
      args: ["append", "--expect-version", "0"], stdin: Array(repeating: UInt8(ascii: "a"), count: (1 << 20) + 1),
      code: 64, message: "message text is 1048577 bytes"),
    Case(
      args: ["append", "--lines", "--expect-version", "0"],
      stdin: Array("fine\n".utf8) + Array(repeating: UInt8(ascii: "b"), count: (1 << 20) + 1) + [10], code: 64,
      message: "line 2: message text is 1048577 bytes"),
  ]

  @Test(arguments: cases, Store.allCases) func refusedAndNothingChanges(_ c: Case, _ store: Store) throws {
    Self.expectRefused(c, on: Self.seeded(store))
  }

  /// `c` run on `s` exits with its code and message, prints nothing on
  /// stdout, and leaves the database byte for byte as it was.
  static func expectRefused(_ c: Case, on s: Sandbox) {
    let exportBefore = s.export()
    let contentsBefore = s.contents()
    let r = s.run(c.args, stdin: Data(c.stdin))
    #expect(r.code == c.code, "\(r)")
    #expect(r.stderr.hasPrefix("msglog: " + c.message), "\(r)")
    #expect(r.stdout.isEmpty, "\(r)")
    #expect(s.contents() == contentsBefore, "the database changed")
    #expect(s.export() == exportBefore)
  }

  /// The same writes on a database that does not exist: refused, and nothing is created.
  @Test(arguments: Store.allCases) func refusedWritesAndReadsLeaveNoDatabaseBehind(_ store: Store) throws {
    let s = Sandbox(store)
    for args in [
      ["insert", "1", "x"], ["move", "0", "1"], ["remove", Self.live], ["append", "--expect-version", "3", "x"],
      ["list"], ["replay"], ["log"], ["streams"], ["export"], ["verify"], ["append", ""],
    ] {
      let r = s.run(args)
      #expect(r.code != 0, "\(args): \(r)")
      #expect(r.stderr.hasPrefix("msglog: "), "\(args): \(r)")
      #expect(s.isEmpty, "\(args) created the database")
      let leftovers = try FileManager.default.contentsOfDirectory(atPath: s.dir).filter { $0.contains(".creating-") }
      #expect(leftovers.isEmpty, "\(args) left \(leftovers)")
    }
    let missing =
      "msglog: \(store == .lmdb ? "no database at" : "no msglog log in") \(s.shown)\nhint: a first 'msglog append TEXT' creates it; choose another with --db PATH or MSGLOG_DB\n"
    let r = s.run("list")
    #expect(r.code == 1 && r.stderr == missing, "\(r)")
    // A write that must find something says the database is missing, as a
    // read does (a tester's mistyped --db was searched as an empty log:
    // "no item … has an id starting with …").
    for args in [
      ["insert", "1", "x"], ["move", "0", "1"], ["remove", Self.live], ["edit", Self.live, "x"],
      ["restore", Self.live], ["undo"], ["erase", Self.live], ["erase", "--sender", "eve"], ["trim", "--before", "3"],
    ] {
      let r = s.run(args)
      #expect(r.code == 1 && r.stderr == missing, "\(args): \(r)")
    }
    #expect(s.isEmpty, "a refused write created the database")
    // A version that does not match stays a conflict (exit 75, as SPEC
    // says): to a write a missing database is a log at version 0.
    let conflict = s.run(["move", "0", "1", "--expect-version", "2"])
    #expect(conflict.code == 75 && s.isEmpty, "\(conflict)")
    // An empty database is searched: the item is not there.
    #expect(s.run("init").code == 0)
    let empty = s.run(["remove", Self.live])
    #expect(
      empty.code == 1 && empty.stderr.hasPrefix("msglog: no item with id \(Self.live) in stream 'main'"), "\(empty)")
  }

  @Test func aPathThatIsNotADatabase() throws {
    let s = Sandbox()
    let file = s.dir + "/notes.txt"
    _ = FileManager.default.createFile(atPath: file, contents: Data("hello".utf8))
    for args in [["list"], ["append", "x"], ["verify"]] {
      let r = s.run(["--db", file] + args)
      #expect(r.code == 1 && r.stderr.hasPrefix("msglog: \(file) is not a msglog database"), "\(r)")
    }
    #expect(try String(contentsOfFile: file, encoding: .utf8) == "hello")
    let garbage = s.dir + "/garbage.lmdb"
    try FileManager.default.createDirectory(atPath: garbage, withIntermediateDirectories: false)
    _ = FileManager.default.createFile(atPath: garbage + "/data.mdb", contents: Data(repeating: 7, count: 8192))
    let r = s.run(["--db", garbage, "list"])
    #expect(r.code == 1 && r.stderr.hasPrefix("msglog: \(garbage) is not a msglog database"), "\(r)")
  }
}
