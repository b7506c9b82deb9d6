import Foundation
import MsglogTestSupport
import Testing

/// `token add|list|revoke` on both stores, through the real binary (SPEC
/// "Who may do what: named tokens"): the token printed once and never
/// stored or listed, names unique among live tokens, bad input exit 64
/// with nothing changed, an unknown token exit 1, a replica refused.
@Suite struct TokenCommandTests {
  /// A secret that cannot be shown (stdout on a full disk) is shown to no
  /// one: the token is revoked again, and its name is free for a second try.
  @Test func aSecretThatCannotBeShownLeavesNoLiveToken() throws {
    let s = Sandbox()
    #expect(s.run("append", "seed").code == 0)
    let handle = try #require(FileHandle(forWritingAtPath: "/dev/full"))
    let r = s.start(["token", "add", "ann", "--write", "*"], stdout: handle).finish()
    #expect(r.code == 1 && r.stderr.hasPrefix("msglog: write error: no space left on device\n"), "\(r)")
    #expect(r.stderr.contains("was made and revoked again, as its secret could not be shown: add it again"), "\(r)")
    let list = s.run(["token", "list"])
    #expect(list.lines.count == 1 && list.lines[0].hasPrefix("ann ") && list.lines[0].contains(" revoked="), "\(list)")
    let again = s.run(["token", "add", "ann", "--write", "*"])
    #expect(again.code == 0 && again.stdout.hasPrefix("msglog_"), "\(again)")
  }

  /// The log's first token waits out the tokenless answers `serve` gave
  /// (a third of a second) before `token add` ends: stopped during that
  /// wait, it has shown the token already. It was made, then the wait,
  /// then shown: a tester's SIGTERM there left a live token nobody had seen
  /// and its name taken. The stop is sent as soon as the token is in the
  /// log (another process lists it), which is during the wait.
  @Test func aStopDuringTheFirstTokensWaitHasShownIt() throws {
    let s = Sandbox()
    s.append("seed")
    let child = s.start(["token", "add", "ann", "--read", "*"])
    let deadline = Date().addingTimeInterval(20)  // a watchdog, not a measure
    while !s.run("token", "list").stdout.contains("ann"), child.process.isRunning, Date() < deadline {
      usleep(1_000)
    }
    kill(child.process.processIdentifier, SIGTERM)
    let r = child.finish()
    #expect(r.stdout.hasPrefix("msglog_") && r.stdout.hasSuffix("\n"), "\(r)")
    #expect(s.run("token", "list").stdout.contains("ann"))
  }

  @Test(arguments: Store.allCases) func addListRevoke(_ store: Store) throws {
    let s = Sandbox(store)
    #expect(s.run("append", "seed").code == 0)
    let added = s.run(["token", "add", "ann", "--write", "team/*", "--read", "*", "--expires", "90d"])
    #expect(added.code == 0, "\(added)")
    let token = added.stdout.trimmingCharacters(in: .newlines)
    #expect(token.hasPrefix("msglog_") && token.count == 7 + 16 + 1 + 64, "\(added)")
    #expect(added.stderr.contains("shown this once"))
    let id = String(token.dropFirst(7).prefix(16))

    // JSON: the name, the id and the token, once.
    let bob = s.run(["token", "add", "bob", "--json"])
    #expect(bob.code == 0, "\(bob)")
    let bobJSON = try JSONSerialization.jsonObject(with: Data(bob.stdout.utf8)) as! [String: Any]
    #expect(bobJSON["name"] as? String == "bob")
    let bobToken = try #require(bobJSON["token"] as? String)
    #expect(bobToken.hasPrefix("msglog_\(bobJSON["id"] as! String)_"))

    // The list shows each, never a secret; nor does the database hold one.
    let list = s.run(["token", "list", "--json"])
    #expect(list.code == 0, "\(list)")
    let secret = String(token.suffix(64)), bobSecret = String(bobToken.suffix(64))
    #expect(!list.stdout.contains(secret) && !list.stdout.contains(bobSecret))
    let tokens = try #require(
      (try JSONSerialization.jsonObject(with: Data(list.stdout.utf8)) as? [String: Any])?["tokens"] as? [[String: Any]])
    #expect(tokens.map { $0["name"] as? String } == ["ann", "bob"])
    #expect(tokens[0]["id"] as? String == id)
    #expect(tokens[0]["read"] as? [String] == ["*"] && tokens[0]["write"] as? [String] == ["team/*"])
    #expect(tokens[0]["expires"] is String && tokens[1]["expires"] is NSNull)
    #expect(tokens[0]["revoked"] is NSNull)
    let contents = s.contents()
    #expect(!contents.contains(secret) && !contents.contains(token))
    let text = s.run(["token", "list"])
    #expect(text.lines.count == 2 && text.lines[0].hasPrefix("ann \(id) read=* write=team/* made="), "\(text)")
    #expect(text.lines[1].contains(" nothing ") && text.lines[1].hasSuffix(" live"), "\(text)")

    // A live token's name is taken; revoked, by name or by id, it is free again.
    let twice = s.run(["token", "add", "ann"])
    #expect(twice.code == 1 && twice.stderr == "msglog: a live token is named 'ann' already\n", "\(twice)")
    let revoked = s.run(["token", "revoke", "ann"])
    #expect(revoked.code == 0 && revoked.stdout == "revoked token ann (id \(id))\n", "\(revoked)")
    #expect(s.run(["token", "revoke", id]).code == 1)
    #expect(s.run(["token", "revoke", "ann"]).code == 1)
    #expect(s.run(["token", "add", "ann", "--read", "team/board"]).code == 0)
    let after = s.run(["token", "list"])
    #expect(after.lines.count == 3 && after.lines[0].contains(" revoked="), "\(after)")
    #expect(s.run(["token", "revoke", "bob"]).code == 0)
  }

  @Test(arguments: Store.allCases) func badInputChangesNothing(_ store: Store) throws {
    let s = Sandbox(store)
    #expect(s.run(["token", "add", "first", "--read", "*"]).code == 0)
    let before = s.contents()
    let usage: [([String], String)] = [
      (["token", "add", "a b"], "invalid token name 'a b'"),
      (["token", "add", String(repeating: "x", count: 65)], "invalid token name"),
      (["token", "add", ""], "invalid token name"),
      (["token", "add", "ann", "--read", "team*"], "invalid stream pattern 'team*'"),
      (["token", "add", "ann", "--write", "*/x"], "invalid stream pattern"),
      (["token", "add", "ann", "--erase", "/*"], "invalid stream pattern"),
      (["token", "add", "ann", "--expires", "3w"], "invalid duration '3w'"),
      (["token", "add", "ann", "--expires", "0d"], "invalid duration"),
      (["token", "add", "ann", "--expires", "-1h"], "invalid duration"),
      (["token", "add"], "'token add' needs NAME"),
      (["token", "frob"], "unknown token action 'frob'"),
      (["token", "list", "--read", "*"], "option --read applies only to 'token add'"),
      (["token", "list", "x"], "'token list' takes no NAME"),
      (["token"], "'token' needs ACTION"),
    ]
    for (args, message) in usage {
      let r = s.run(args)
      #expect(r.code == 64 && r.stderr.hasPrefix("msglog: " + message), "\(args): \(r)")
    }
    let unknown = s.run(["token", "revoke", "nobody"])
    #expect(unknown.code == 1 && unknown.stderr.hasPrefix("msglog: no token"), "\(unknown)")
    #expect(s.contents() == before)
  }

  /// Tokens are the server's: a replica keeps none, and says so.
  @Test func aReplicaRefusesTokenCommands() throws {
    let remote = Sandbox(.postgres)
    #expect(remote.run("append", "seed").code == 0)
    let replica = Sandbox()
    let clone = replica.run(["clone", remote.db])
    #expect(clone.code == 0, "\(clone)")
    let before = replica.contents()
    for args in [["token", "add", "ann"], ["token", "list"], ["token", "revoke", "ann"]] {
      let r = replica.run(args)
      #expect(r.code == 1 && r.stderr.contains("is a replica: tokens are kept by the log it syncs with"), "\(r)")
    }
    #expect(replica.contents() == before)
  }
}
