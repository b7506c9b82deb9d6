import Foundation
import MsglogTestSupport
import Testing

/// `msglog diff A B` on the binary: exact text and JSON.
@Suite struct DiffTests {
  static let ids = (1...4).map { "0000000\($0)-0000-4000-8000-000000000000" }

  @Test(arguments: Store.allCases) func textAndJSON(_ store: Store) {
    let s = Sandbox(store)
    let ids = Self.ids
    #expect(s.run(["append", "--id", ids[0], "--sender", "ann", "Morning!"]).code == 0)
    #expect(s.run(["append", "--id", ids[1], "Agenda"]).code == 0)
    #expect(s.run(["append", "--id", ids[2], "--sender", "cat", "Lunch?"]).code == 0)
    // seq 3: Morning!, Agenda, Lunch?
    #expect(s.run(["remove", ids[0]]).code == 0)  // 4
    #expect(s.run(["insert", "0", "--id", ids[3], "--sender", "bob", "Yes, room 4B."]).code == 0)  // 5
    #expect(s.run(["move", "2", "0"]).code == 0)  // 6: Lunch?, Yes, Agenda
    var r = s.run(["diff", "3", "6"])
    #expect(
      r.stdout == """
        - 0  00000001  ann  Morning!
        + 1  00000004  bob  Yes, room 4B.
        > 2 -> 0  00000003

        """, "\(r)")
    r = s.run(["diff", "3", "6", "--json"])
    #expect(
      maskingTimes(r.stdout)
        == #"{"stream":"main","from":3,"to":6,"removed":[{"index":0,"id":"\#(ids[0])"}],"inserted":[{"index":1,"id":"\#(ids[3])","text":"Yes, room 4B.","sender":"bob","time":"TIME","seq":5}],"moved":[{"from":2,"to":0,"id":"\#(ids[2])"}],"edited":[]}"#
        + "\n", "\(r)")
    // Backwards, and nothing at all.
    r = s.run(["diff", "6", "3"])
    #expect(r.code == 0 && r.lines.first == "- 1  00000004  bob  Yes, room 4B.", "\(r)")
    #expect(s.run(["diff", "6", "6"]).stdout.isEmpty)
    // A stream that did not exist yet at A: everything is inserted.
    r = s.run(["diff", "0", "2"])
    #expect(r.lines.count == 2 && r.lines.allSatisfy { $0.hasPrefix("+ ") }, "\(r)")
  }

  @Test(arguments: Store.allCases) func badArguments(_ store: Store) {
    let s = Sandbox(store)
    s.append("x")
    var r = s.run(["diff", "1"])
    #expect(r.code == 64 && r.stderr.hasPrefix("msglog: 'diff' needs B"), "\(r)")
    r = s.run(["diff", "1", "x"])
    #expect(r.code == 64 && r.stderr.hasPrefix("msglog: invalid seq B 'x'"), "\(r)")
    r = s.run(["diff", "0", "9"])
    #expect(r.code == 1 && r.stderr.hasPrefix("msglog: seq 9 is beyond the head of the log (1)"), "\(r)")
  }
}
