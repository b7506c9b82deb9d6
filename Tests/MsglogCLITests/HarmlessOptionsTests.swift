import Foundation
import MsglogTestSupport
import Testing

/// Options that only choose a log (`--db`), a stream (`--stream`) or the
/// output form (`--json`) are harmless where no log is read — `help`,
/// `--help`, `--version`, `completions` — so that an alias such as
/// `alias team='msglog --db team.lmdb'` still gets `team help`. They are
/// accepted, change no output, and open no database.
@Suite struct HarmlessOptionsTests {
  @Test func helpVersionAndCompletionsTakeTheOptionsThatChooseALog() throws {
    let s = Sandbox()
    let overview = s.run(["help"])
    let appendPage = s.run(["help", "append"])
    let version = s.run(["--version"])
    let bash = s.run(["completions", "bash"])
    let manual = s.run(["help", "--man"])
    for r in [overview, appendPage, version, bash, manual] { #expect(r.code == 0 && !r.stdout.isEmpty, "\(r)") }
    #expect(overview.stdout.hasPrefix("USAGE: msglog [--db PATH]") && version.stdout.hasPrefix("msglog "))

    // Databases that must not be opened: a file that is none, a server with nothing listening, a missing one.
    let file = s.dir + "/notes.txt"
    _ = FileManager.default.createFile(atPath: file, contents: Data("hello".utf8))
    for db in [file, "postgres://ann:hunter2@127.0.0.1:1/team", s.db] {
      let cases: [([String], Run)] = [
        (["--db", db, "help"], overview),
        (["help", "--db", db], overview),
        (["--db", db, "--help"], overview),
        (["--db", db, "--stream", "standup", "--json", "help"], overview),
        (["--stream", "standup", "--json", "help", "append", "--db=\(db)"], appendPage),
        (["--db", db, "append", "--help"], appendPage),
        (["--db", db, "help", "--man"], manual),
        (["--db", db, "--version"], version),
        (["--version", "--db", db, "--stream", "standup", "--json"], version),
        (["--db", db, "list", "--version"], version),
        (["completions", "bash", "--db", db], bash),
        (["--db", db, "--stream", "standup", "--json", "completions", "bash"], bash),
      ]
      for (args, expected) in cases {
        let r = s.run(args, environment: ["MSGLOG_STREAM": "x\u{1}bad"])
        #expect(r.code == 0 && r.stdout == expected.stdout && r.stderr.isEmpty, "\(args): \(r)")
      }
    }
    #expect(try String(contentsOfFile: file, encoding: .utf8) == "hello")
    #expect(s.isEmpty, "a database was created")
    // Only those: an option that belongs to no log stays a usage error.
    let r = s.run(["help", "--sender", "ann"])
    #expect(r.code == 64 && r.stderr.hasPrefix("msglog: option --sender does not apply to 'help'"), "\(r)")
  }
}
