import Foundation
import Msglog
import MsglogServer
import MsglogTestSupport
import Testing

/// One catalogue of bad writes through the three doors that take writes:
/// the command line (the built binary), the HTTP API (the router in
/// process, on the same database) and import lines (the binary's
/// `import`). Each write is refused by every door that can say it with the
/// same words — a member's name in each door's spelling (`"rebase"` in
/// JSON, `--rebase` on the command line) — and nothing changes.
@Suite struct WriteDoorsTests {
  static let live = "0000aaaa-0000-4000-8000-000000000001"
  static let twin = "0000aaaa-0000-4000-8000-000000000002"
  static let removed = "0000bbbb-0000-4000-8000-000000000003"
  static let elsewhere = "0000cccc-0000-4000-8000-000000000004"
  static let nowhere = "0000dddd-0000-4000-8000-000000000009"
  static let longText = String(repeating: "a", count: (1 << 20) + 1)
  static let longSender = String(repeating: "s", count: 1025)
  static let longStream = String(repeating: "s", count: 201)

  /// A bad write: its operation, its members as JSON, and the words.
  struct Case: CustomStringConvertible, Sendable {
    var op: String
    /// Names and JSON values, in the order of the object.
    var members: [(String, String)]
    /// The same write on the command line (arguments, stdin); nil where
    /// it has no way to say it (a JSON type, a member it has no option for).
    var cli: [String]?
    var stdin = ""
    /// Whether the HTTP API and import take the operation and members.
    var http = true
    var imports = true
    /// The message; `{rebase}` and `{expectVersion}` in the door's spelling.
    var message: String

    init(
      _ op: String, _ members: [(String, String)], cli: [String]? = nil, stdin: String = "", http: Bool = true,
      imports: Bool? = nil, _ message: String
    ) {
      self.op = op
      self.members = members
      self.cli = cli
      self.stdin = stdin
      self.http = http
      // An import line is an event: no undo, no version of the list seen.
      self.imports =
        imports ?? (op != "undo" && !members.contains { ["expectVersion", "rebase"].contains($0.0) })
      self.message = message
    }

    var object: String { "{" + members.map { "\"\($0.0)\":\($0.1)" }.joined(separator: ",") + "}" }
    var line: String { "{\"op\":\"\(op)\"" + members.map { ",\"\($0.0)\":\($0.1)" }.joined() + "}" }
    var description: String { String((op + " " + object).prefix(120)) }
  }

  static func string(_ text: String) -> String {
    "\"" + text.replacing("\\", with: "\\\\").replacing("\"", with: "\\\"").replacing("\u{1}", with: "\\u0001") + "\""
  }

  static let cases: [Case] = [
    // The values' rules and the ledger's refusals: every door.
    Case("append", [("text", #""""#)], cli: ["append", ""], "message text is empty"),
    Case(
      "append", [("text", string(longText))], cli: ["append"], stdin: longText,
      "message text is 1048577 bytes; the limit is 1048576 bytes (1 MiB)"),
    Case("append", [("text", #""x""#), ("sender", #""""#)], cli: ["append", "--sender", "", "x"], "sender is empty"),
    Case(
      "append", [("text", #""x""#), ("sender", string(longSender))], cli: ["append", "--sender", longSender, "x"],
      "sender is 1025 bytes; the limit is 1024 bytes"),
    Case(
      "append", [("text", #""x""#), ("stream", #""""#)], cli: ["append", "--stream", "", "x"], "stream name is empty"),
    Case(
      "append", [("text", #""x""#), ("stream", string("a\u{1}b"))], cli: ["append", "--stream", "a\u{1}b", "x"],
      "stream name 'a\\x01b' contains a control character"),
    Case(
      "append", [("text", #""x""#), ("stream", string(longStream))], cli: ["append", "--stream", longStream, "x"],
      "stream name is 201 bytes; the limit is 200 bytes"),
    Case(
      "append", [("text", #""x""#), ("id", #""not-a-uuid""#)], cli: ["append", "--id", "not-a-uuid", "x"],
      "malformed id 'not-a-uuid': expected a UUID"),
    Case(
      "append", [("text", #""again""#), ("id", string(removed))], cli: ["append", "--id", removed, "again"],
      "id \(removed) was already used (inserted at seq 3)"),
    Case(
      "insert", [("index", "3"), ("text", #""x""#)], cli: ["insert", "3", "x"],
      "index 3 is out of range: stream 'main' has 2 items, so the index can be 0…2"),
    Case(
      "move", [("from", "2"), ("to", "0")], cli: ["move", "2", "0"],
      "from index 2 is out of range: stream 'main' has 2 items (0…1)"),
    Case(
      "move", [("from", "0"), ("to", "0"), ("stream", #""empty""#)], cli: ["move", "0", "0", "--stream", "empty"],
      "cannot move in stream 'empty': it has no items"),
    Case(
      "remove", [("id", #""zzzzzzzz""#)], cli: ["remove", "zzzzzzzz"],
      "malformed id 'zzzzzzzz': expected a UUID or a prefix of one"),
    Case(
      "remove", [("id", #""0000aaa""#)], cli: ["remove", "0000aaa"],
      "id prefix '0000aaa' is too short: give at least 8 characters"),
    Case(
      "remove", [("id", string(nowhere))], cli: ["remove", nowhere], "no item with id \(nowhere) in stream 'main'"),
    Case(
      "remove", [("id", string(removed))], cli: ["remove", removed], "item \(removed) was already removed (at seq 5)"),
    Case(
      "remove", [("id", string(elsewhere))], cli: ["remove", elsewhere],
      "item \(elsewhere) is in stream 'other', not 'main'"),
    Case(
      "remove", [("id", #""0000aaaa""#)], cli: ["remove", "0000aaaa"],
      "id prefix 0000aaaa is ambiguous in stream 'main': it matches \(live), \(twin)"),
    Case("edit", [("id", string(live)), ("text", #""""#)], cli: ["edit", live, ""], "message text is empty"),
    Case(
      "edit", [("id", string(live)), ("text", #""x""#), ("sender", #""""#)], cli: ["edit", live, "x", "--sender", ""],
      "sender is empty"),
    Case(
      "restore", [("id", string(live))], cli: ["restore", live],
      "item \(live) is live in stream 'main': only a removed item can come back"),
    Case(
      "restore", [("id", string(removed)), ("index", "3")], cli: ["restore", removed, "--index", "3"],
      "index 3 is out of range: stream 'main' has 2 items, so the index can be 0…2"),
    Case(
      "restore", [("id", #""0000eeee""#)], cli: ["restore", "0000eeee"],
      "no removed item of stream 'main' has an id starting with 0000eeee"),
    // A command made on a list seen at a version, and undo: the command line and HTTP.
    Case(
      "move", [("from", "0"), ("to", "1"), ("rebase", "true")], cli: ["move", "0", "1", "--rebase"],
      "{rebase} needs {expectVersion}: the version the command was made at"),
    Case(
      "insert", [("index", "0"), ("text", #""x""#), ("rebase", "true")], cli: ["insert", "0", "x", "--rebase"],
      "{rebase} needs {expectVersion}: the version the command was made at"),
    Case(
      "move", [("from", "0"), ("to", "1"), ("expectVersion", "9")], cli: ["move", "0", "1", "--expect-version", "9"],
      "stream 'main' is at version 4, not 9"),
    Case(
      "insert", [("index", "3"), ("text", #""x""#), ("expectVersion", "2"), ("rebase", "true")],
      cli: ["insert", "3", "x", "--expect-version", "2", "--rebase"],
      "index 3 is out of range: stream 'main' had 2 items at version 2"),
    Case("undo", [("seq", "9")], cli: ["undo", "9"], "there is no event 9: the log holds 1…5"),
    Case("undo", [("seq", "4")], cli: ["undo", "4"], "event 4 is in stream 'other', not 'main'"),
    Case(
      "undo", [("stream", #""empty""#)], cli: ["undo", "--stream", "empty"],
      "nothing to undo in stream 'empty': no event that is not undone would change anything"),
    // The members' JSON: HTTP and import (the command line's arguments are text, checked by its parser).
    Case("append", [("text", "5")], #""text" must be a string, not a number"#),
    Case("append", [("text", #""x""#), ("sender", "null")], #""sender" must be a string, not null"#),
    Case("append", [("text", #""x""#), ("sender", "true")], #""sender" must be a string, not a boolean"#),
    Case("append", [("text", #""x""#), ("stream", "[]")], #""stream" must be a string, not an array"#),
    Case("insert", [("index", "-1"), ("text", #""x""#)], #""index" must be a whole number from 0 to 2^63-1"#),
    Case("insert", [("index", "1.5"), ("text", #""x""#)], #""index" must be a whole number from 0 to 2^63-1"#),
    Case(
      "insert", [("index", "9223372036854775808"), ("text", #""x""#)],
      #""index" must be a whole number from 0 to 2^63-1"#),
    Case(
      "insert", [("index", #""1""#), ("text", #""x""#)],
      #""index" must be a whole number from 0 to 2^63-1, not a string"#
    ),
    Case("insert", [("text", #""x""#)], #"an insert needs "index""#),
    Case("edit", [("id", string(live))], #"an edit needs "text""#),
    Case("remove", [], #"a remove needs "id""#),
    Case("move", [], #"a move needs "from" and "to""#),
    Case("move", [("from", "0")], #"a move needs "to""#),
    Case("append", [("text", #""x""#), ("from", "1")], #"an append takes no "from""#),
    Case("restore", [("id", string(removed)), ("text", #""x""#)], #"a restore takes no "text""#),
    Case("append", [("text", #""x""#), ("colour", #""red""#)], #"unknown member "colour""#),
    Case(
      "move", [("from", "0"), ("to", "1"), ("id", #""not-a-uuid""#)], "malformed id 'not-a-uuid': expected a UUID"),
    Case("move", [("from", "0"), ("to", "1"), ("id", string(twin))], "the item at index 0 is \(live), not \(twin)"),
    // HTTP's own members.
    Case(
      "move", [("from", "0"), ("to", "1"), ("expectVersion", "4"), ("rebase", #""yes""#)],
      #""rebase" must be true or false, not a string"#),
    Case("append", [("text", #""x""#), ("expectVersion", "4"), ("rebase", "true")], #"an append takes no "rebase""#),
    Case("undo", [("seq", #""1""#)], #""seq" must be a whole number from 0 to 2^63-1, not a string"#),
    // An exported event's: import.
    Case(
      "append", [("text", #""x""#), ("time", #""yesterday""#)], http: false,
      #""time" is not an RFC 3339 timestamp: 'yesterday'"#),
    Case("remove", [("id", string(twin)), ("undoes", "0")], http: false, #""undoes" must name a seq, from 1"#),
    Case("insert", [("index", "0"), ("text", #""x""#), ("undoes", "1")], http: false, #"an insert takes no "undoes""#),
  ]

  /// Two live items sharing an 8-character prefix, one removed, one in
  /// another stream (BadInputTests' database): main is at version 4, the
  /// log at seq 5.
  static func seeded() -> Sandbox {
    let s = Sandbox()
    for (id, stream) in [(live, "main"), (twin, "main"), (removed, "main"), (elsewhere, "other")] {
      #expect(s.run(["append", "--id", id, "--stream", stream, "text of \(id.prefix(8))"]).code == 0)
    }
    #expect(s.run(["remove", removed]).code == 0)
    return s
  }

  /// What a door said: the message, without the door's frame.
  static func spoken(_ run: Run, after prefix: String) -> String? {
    let first = run.stderr.split(separator: "\n").first.map(String.init) ?? ""
    guard run.code != 0, run.stdout.isEmpty, first.hasPrefix(prefix) else { return nil }
    return String(first.dropFirst(prefix.count))
  }

  @Test func everyDoorRefusesABadWriteWithTheSameWords() throws {
    let s = Self.seeded()
    let before = s.export()
    let log = try EventLog(s.db)
    let server = try HTTPServer(
      log: log, configuration: ServerConfiguration(listen: ListenAddress(parsing: "127.0.0.1:0")))
    var doors = 0
    for c in Self.cases {
      let json = c.message.replacing("{rebase}", with: "\"rebase\"").replacing(
        "{expectVersion}", with: "\"expectVersion\"")
      if c.http {
        let request = try Request(
          method: "POST", target: "/api/" + c.op,
          headers: [("Host", "127.0.0.1:8080"), ("Content-Type", "application/json")], body: Array(c.object.utf8))
        let response = server.router.respond(to: request)
        let body = try #require(response.bodyBytes)
        let answer = try JSONSerialization.jsonObject(with: Data(body)) as? [String: Any]
        #expect(
          (400..<500).contains(response.status) && answer?["error"] as? String == json,
          "HTTP \(c): \(response.status) \(String(decoding: body, as: UTF8.self))")
        doors += 1
      }
      if c.imports {
        let r = s.run(["import"], stdin: Data((c.line + "\n").utf8))
        #expect(r.code == 1 && Self.spoken(r, after: "msglog: line 1: ") == json, "import \(c): \(r)")
        doors += 1
      }
      if let args = c.cli {
        let words = c.message.replacing("{rebase}", with: "--rebase").replacing(
          "{expectVersion}", with: "--expect-version N")
        let r = s.run(args, stdin: Data(c.stdin.utf8))
        #expect(Self.spoken(r, after: "msglog: ") == words, "command line \(c): \(r)")
        doors += 1
      }
    }
    #expect(doors > 2 * Self.cases.count)
    #expect(s.export() == before)
  }
}
