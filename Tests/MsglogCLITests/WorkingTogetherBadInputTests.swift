import Foundation
import MsglogTestSupport
import Testing

/// The bad-input catalogue of working together: every new way to get an
/// argument of `edit`, `restore`, `undo` or `--rebase` wrong gives its exit
/// code, one `msglog: ` message on stderr, nothing on stdout, and leaves the
/// database byte for byte as it was.
@Suite struct WorkingTogetherBadInputTests {
  typealias Case = BadInputTests.Case

  static let live = BadInputTests.live
  static let twin = BadInputTests.twin
  static let removed = BadInputTests.removed
  static let elsewhere = BadInputTests.elsewhere

  /// BadInputTests' database, then an edit of `live` and its undo. Seqs: 1
  /// live, 2 twin, 3 removed (main), 4 elsewhere (other), 5 the remove of
  /// `removed`, 6 an edit of `live`, 7 its undo. Main is at version 6.
  static func seeded(_ store: Store) -> Sandbox {
    let s = BadInputTests.seeded(store)
    #expect(s.run(["edit", live, "edited"]).code == 0)
    #expect(s.run(["undo"]).code == 0)
    return s
  }

  static func importing(_ line: String) -> [UInt8] { Array((line + "\n").utf8) }

  static let cases: [Case] = [
    // usage (64)
    Case(args: ["edit"], code: 64, message: "'edit' needs ID"),
    Case(args: ["edit", live, ""], code: 64, message: "message text is empty"),
    Case(args: ["edit", live], stdin: Array("\n".utf8), code: 64, message: "message text is empty"),
    Case(args: ["edit", "zzzzzzzz", "x"], code: 64, message: "malformed id 'zzzzzzzz'"),
    Case(args: ["edit", live, "x", "--sender", ""], code: 64, message: "sender is empty"),
    Case(
      args: ["edit", live, "x", "--rebase"], code: 64,
      message: "--rebase needs --expect-version N: the version the command was made at"),
    Case(args: ["move", "0", "1", "--rebase"], code: 64, message: "--rebase needs --expect-version N"),
    Case(args: ["insert", "0", "x", "--rebase"], code: 64, message: "--rebase needs --expect-version N"),
    Case(args: ["remove", live, "--rebase"], code: 64, message: "--rebase needs --expect-version N"),
    Case(
      args: ["append", "--rebase", "--expect-version", "6", "x"], code: 64,
      message: "option --rebase does not apply to 'append'"),
    Case(
      args: ["restore", removed, "--rebase", "--expect-version", "6"], code: 64,
      message: "option --rebase does not apply to 'restore'"),
    Case(args: ["undo", "--rebase"], code: 64, message: "option --rebase does not apply to 'undo'"),
    Case(args: ["undo", "--index", "1"], code: 64, message: "option --index does not apply to 'undo'"),
    Case(args: ["restore"], code: 64, message: "'restore' needs ID"),
    Case(args: ["restore", removed, "x"], code: 64, message: "unexpected argument 'x' for 'restore'"),
    Case(args: ["restore", removed, "--index", "-1"], code: 64, message: "invalid --index '-1'"),
    Case(args: ["restore", removed, "--index"], code: 64, message: "option --index needs a value"),
    Case(args: ["restore", "0000bbb"], code: 64, message: "id prefix '0000bbb' is too short"),
    Case(args: ["undo", "x"], code: 64, message: "invalid SEQ 'x'"),
    Case(args: ["undo", "-1"], code: 64, message: "invalid SEQ '-1'"),
    Case(args: ["undo", "1", "2"], code: 64, message: "unexpected argument '2' for 'undo'"),
    Case(args: ["undo", "--sender", ""], code: 64, message: "sender is empty"),
    Case(
      args: ["undo", "--sender", String(repeating: "s", count: 1025)], code: 64,
      message: "sender is 1025 bytes; the limit is 1024 bytes"),
    // import lines (a bad line is a refused import: exit 1)
    Case(
      args: ["import"], stdin: importing(#"{"op":"edit","id":"\#(live)"}"#), code: 1,
      message: "line 1: an edit needs \"text\""),
    Case(args: ["import"], stdin: importing(#"{"op":"restore"}"#), code: 1, message: "line 1: a restore needs \"id\""),
    Case(
      args: ["import"], stdin: importing(#"{"op":"insert","index":0,"text":"x","undoes":1}"#), code: 1,
      message: "line 1: an insert takes no \"undoes\""),
    Case(
      args: ["import"], stdin: importing(#"{"op":"remove","id":"\#(twin)","undoes":0}"#), code: 1,
      message: "line 1: \"undoes\" must name a seq, from 1"),
    Case(
      args: ["import"], stdin: importing(#"{"op":"restore","id":"\#(removed)","from":1}"#), code: 1,
      message: "line 1: a restore takes no \"from\""),
    Case(
      args: ["import"], stdin: importing(#"{"op":"remove","id":"\#(twin)","undoes":1}"#), code: 1,
      message: "line 1: this does not undo event 1: undoing an insert of \(live) is not a remove of \(twin)"),
    Case(
      args: ["import"], stdin: importing(#"{"op":"edit","id":"\#(live)","text":"y","undoes":6}"#), code: 1,
      message: "line 1: event 6 is already undone (by event 7)"),
    Case(
      args: ["import"], stdin: importing(#"{"op":"restore","id":"\#(removed)","undoes":4}"#), code: 1,
      message: "line 1: event 4 is in stream 'other', not 'main'"),
    Case(
      args: ["import"], stdin: importing(#"{"op":"remove","id":"\#(twin)","undoes":9}"#), code: 1,
      message: "line 1: there is no event 9: the log holds 1…7"),
    Case(
      args: ["import"], stdin: importing(#"{"op":"restore","id":"\#(live)"}"#), code: 1,
      message: "line 1: item \(live) is live in stream 'main'"),
    // refused (1)
    Case(
      args: ["restore", live], code: 1,
      message: "item \(live) is live in stream 'main': only a removed item can come back"),
    Case(
      args: ["restore", "0000dddd-0000-4000-8000-000000000009"], code: 1,
      message: "no item with id 0000dddd-0000-4000-8000-000000000009 in stream 'main'"),
    Case(args: ["restore", elsewhere], code: 1, message: "item \(elsewhere) is in stream 'other', not 'main'"),
    Case(
      args: ["restore", "0000eeee"], code: 1,
      message: "no removed item of stream 'main' has an id starting with 0000eeee"),
    Case(
      args: ["restore", "0000aaaa"], code: 1,
      message: "no removed item of stream 'main' has an id starting with 0000aaaa"),
    Case(args: ["restore", removed, "--index", "3"], code: 1, message: "index 3 is out of range: stream 'main' has 2 items"),
    Case(args: ["edit", removed, "x"], code: 1, message: "item \(removed) was already removed (at seq 5)"),
    Case(args: ["edit", elsewhere, "x"], code: 1, message: "item \(elsewhere) is in stream 'other', not 'main'"),
    Case(args: ["edit", "0000aaaa", "x"], code: 1, message: "id prefix 0000aaaa is ambiguous in stream 'main'"),
    Case(args: ["undo", "6"], code: 1, message: "event 6 is already undone (by event 7)"),
    Case(args: ["undo", "4"], code: 1, message: "event 4 is in stream 'other', not 'main'"),
    Case(args: ["undo", "0"], code: 1, message: "there is no event 0: the log holds 1…7"),
    Case(args: ["undo", "8"], code: 1, message: "there is no event 8: the log holds 1…7"),
    Case(args: ["undo", "3"], code: 1, message: "item \(removed) was already removed (at seq 5)"),
    Case(args: ["undo", "--stream", "empty"], code: 1, message: "nothing to undo in stream 'empty'"),
    Case(
      args: ["move", "5", "0", "--expect-version", "5", "--rebase"], code: 1,
      message: "index 5 is out of range: stream 'main' had 2 items at version 5"),
    Case(
      args: ["insert", "3", "x", "--expect-version", "2", "--rebase"], code: 1,
      message: "index 3 is out of range: stream 'main' had 2 items at version 2"),
    Case(
      args: ["remove", removed, "--expect-version", "1", "--rebase"], code: 1,
      message: "item \(removed) was already removed (at seq 5)"),
    Case(
      args: ["move", "2", "0", "--expect-version", "3", "--rebase"], code: 1,
      message: "item \(removed) was already removed (at seq 5)"),
    // conflict (75)
    Case(args: ["edit", live, "x", "--expect-version", "1"], code: 75, message: "stream 'main' is at version 6, not 1"),
    Case(args: ["restore", removed, "--expect-version", "2"], code: 75, message: "stream 'main' is at version 6, not 2"),
    Case(args: ["undo", "--expect-version", "9"], code: 75, message: "stream 'main' is at version 6, not 9"),
    Case(
      args: ["move", "0", "1", "--expect-version", "9", "--rebase"], code: 75,
      message: "stream 'main' is at version 6, not 9"),
  ]

  @Test(arguments: cases, Store.allCases) func refusedAndNothingChanges(_ c: Case, _ store: Store) throws {
    BadInputTests.expectRefused(c, on: Self.seeded(store))
  }

  /// The new writes on a database that does not exist: refused, and nothing is created.
  /// `restore` given the prefix of a live item says it is live, as its
  /// full id does — not "no removed item has an id starting with", which
  /// hid why.
  @Test func aLiveItemsPrefixIsSaidToBeLive() {
    let s = Sandbox()
    let id = s.append("x")
    let before = s.contents()
    let r = s.run("restore", String(id.prefix(8)))
    #expect(r.code == 1 && r.stderr.hasPrefix("msglog: item \(id) is live in stream 'main'"), "\(r)")
    #expect(s.contents() == before)
  }

  @Test(arguments: Store.allCases) func refusedWritesLeaveNoDatabaseBehind(_ store: Store) throws {
    let s = Sandbox(store)
    for args in [
      ["edit", Self.live, "x"], ["restore", Self.removed], ["undo"], ["undo", "1"],
      ["move", "0", "1", "--expect-version", "0", "--rebase"],
    ] {
      let r = s.run(args)
      #expect(r.code == 1, "\(args): \(r)")
      #expect(r.stderr.hasPrefix("msglog: "), "\(args): \(r)")
      #expect(s.isEmpty, "\(args) created the database")
    }
  }
}
