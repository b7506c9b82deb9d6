import Foundation
import MsglogTestSupport
import Testing

/// A write that changes nothing (issue 26 item 6): with `--json` the command
/// line prints the document `serve` answers — `{"moved":false}`,
/// `{"edited":false}`, `{"undone":false}` — so a script parses one shape
/// whatever happened; text mode stays silent on stdout; either way exit 0,
/// the note on stderr, nothing appended.
@Suite struct NoOpJSONTests {
  /// Each no-op, in text mode then with `--json`, on both stores.
  @Test(arguments: Store.allCases) func eachNoOpPrintsServesDocument(_ store: Store) throws {
    let s = Sandbox(store)
    let a = s.append("a")
    s.append("b")
    #expect(s.run("move", "0", "1").code == 0)  // seq 3
    #expect(s.run("move", "1", "0").code == 0)  // seq 4: a is back at 0
    let noOps: [(args: [String], document: String, note: String)] = [
      (["move", "1", "1"], #"{"moved":false}"#, "msglog: nothing to do: the item is already at index 1\n"),
      (["edit", a, "a"], #"{"edited":false}"#, "msglog: nothing to do: the item has this text already\n"),
      (["undo", "3"], #"{"undone":false}"#, "msglog: nothing to do: undoing event 3 changes nothing now\n"),
    ]
    let head = s.run("log").lines.count
    for (args, document, note) in noOps {
      var r = s.run(args)
      #expect(r.code == 0 && r.stdout.isEmpty && r.stderr == note, "\(args): \(r)")
      r = s.run(args + ["--json"])
      #expect(r.code == 0 && r.stdout == document + "\n" && r.stderr == note, "\(args) --json: \(r)")
      let parsed = try JSONSerialization.jsonObject(with: Data(r.stdout.utf8)) as? [String: Bool]
      #expect(parsed?.count == 1 && parsed?.values.first == false, "\(args): \(r.stdout)")
    }
    #expect(s.run("log").lines.count == head, "a no-op appended an event")
    #expect(s.run("verify").code == 0)
  }

  /// A no-op writes nothing: the database's file is byte for byte what it
  /// was (no head or summary row put back unchanged, which moved LMDB's
  /// transaction id and woke every follower for nothing). A real edit
  /// after them does change it, so the comparison can fail.
  @Test func aNoOpLeavesTheFileAsItWas() throws {
    let s = Sandbox()
    let a = s.append("a")
    s.append("b", stream: "other")
    let file = s.db + "/data.mdb"
    let before = try Data(contentsOf: URL(fileURLWithPath: file))
    for args in [["move", "0", "0"], ["edit", a, "a"], ["--stream", "other", "move", "0", "0"]] {
      #expect(s.run(args).code == 0, "\(args)")
      #expect(try Data(contentsOf: URL(fileURLWithPath: file)) == before, "\(args) changed the file")
    }
    #expect(s.run("edit", a, "A").code == 0)
    #expect(try Data(contentsOf: URL(fileURLWithPath: file)) != before)
  }

  /// Texts and senders are bytes: an edit to a canonically equivalent
  /// text ("\u{212A}im", KELVIN SIGN, for "Kim") is an edit, not "nothing
  /// to do", and `erase --sender Kim` leaves the items of the sender
  /// "\u{212A}im" alone (Swift's `==` took each for the other).
  @Test(arguments: Store.allCases) func textsAndSendersAreComparedByteForByte(_ store: Store) throws {
    let s = Sandbox(store)
    let kelvin = "\u{212A}im"
    let item = s.append("Kim", sender: "Kim")
    s.append("by the other", sender: kelvin)
    var r = s.run("edit", item, kelvin)
    #expect(r.code == 0 && r.stderr.isEmpty, "\(r)")
    #expect(s.run("log").lines.count == 3, "the edit appended nothing")
    r = s.run("erase", "--sender", "Kim")
    #expect(r.code == 0 && r.stdout.hasPrefix("erased 1 item"), "\(r)")
    let left = s.run("list").stdout
    #expect(left.contains("by the other") && !left.contains(kelvin + "\n"), "\(left)")
  }

  /// A rebased move that finds the item where the move meant it is a no-op
  /// too, and prints the same document.
  @Test func aRebasedNoOpMove() throws {
    let s = Sandbox()
    s.append("a")
    s.append("b")
    #expect(s.run("move", "0", "1").code == 0)  // seq 3, version 3
    let r = s.run("move", "0", "1", "--expect-version", "2", "--rebase", "--json")
    #expect(r.code == 0 && r.stdout == #"{"moved":false}"# + "\n", "\(r)")
    #expect(r.stderr == "msglog: nothing to do: the item is already where the move meant it\n", "\(r)")
  }

  /// The same no-ops sent to `serve` answer the very bytes the command line prints.
  @Test func theCommandLineAndServeAgree() throws {
    let s = Sandbox()
    let a = s.append("a")
    s.append("b")
    #expect(s.run("move", "0", "1").code == 0)
    #expect(s.run("move", "1", "0").code == 0)
    let cli = [
      s.run("move", "1", "1", "--json").stdout, s.run("edit", a, "a", "--json").stdout,
      s.run("undo", "3", "--json").stdout,
    ]
    let server = ServedLog(s)
    defer { #expect(server.stop().code == 0) }
    let served = [
      server.request("POST", "/api/move", #"{"from":1,"to":1}"#),
      server.request("POST", "/api/edit", #"{"id":"\#(a)","text":"a"}"#),
      server.request("POST", "/api/undo", #"{"seq":3}"#),
    ]
    for (line, reply) in zip(cli, served) {
      #expect(reply.status == 200 && reply.body.trimmingCharacters(in: .newlines) + "\n" == line, "\(reply) vs \(line)")
    }
  }
}
