import Foundation
import MsglogTestSupport
import Testing

/// A mistyped command or option is a usage error (64) with the name meant,
/// as git and cargo say it; a word far from every name gets the usual hint.
@Suite struct SuggestionTests {
  @Test(arguments: [
    (["lsit"], "unknown command 'lsit'", "did you mean 'list'?"),
    (["imprt"], "unknown command 'imprt'", "did you mean 'import'?"),
    (["verfiy"], "unknown command 'verfiy'", "did you mean 'verify'?"),
    (["LIST"], "unknown command 'LIST'", "did you mean 'list'?"),
    (["apend", "x"], "unknown command 'apend'", "did you mean 'append'?"),
    (["help", "mvoe"], "no help for unknown command 'mvoe'", "did you mean 'move'?"),
    (["list", "--jsno"], "unknown option '--jsno'", "did you mean '--json'?"),
    (["list", "--strem=main"], "unknown option '--strem'", "did you mean '--stream'?"),
    (["log", "--limt", "3"], "unknown option '--limt'", "did you mean '--limit'?"),
    (["append", "--sendr", "ann", "x"], "unknown option '--sendr'", "did you mean '--sender'?"),
  ])
  func aNearNameIsSuggested(_ args: [String], _ message: String, _ hint: String) {
    let s = Sandbox()
    let r = s.run(args)
    #expect(r.code == 64 && r.stdout.isEmpty, "\(r)")
    #expect(r.stderr == "msglog: \(message)\nhint: \(hint)\n", "\(r)")
    #expect(s.isEmpty)
  }

  /// Only the command's own options are offered: `list --frm` was offered
  /// `--from`, which `list` refuses next ("does not apply to 'list'").
  /// Without a command every option is a candidate.
  @Test func onlyTheCommandsOptionsAreOffered() {
    let s = Sandbox()
    for args in [["list", "--frm"], ["list", "--rebse"], ["--frob", "list"]] {
      let r = s.run(args)
      #expect(r.code == 64 && !r.stderr.contains("did you mean"), "\(args): \(r)")
    }
    let r = s.run("--frm")
    #expect(r.code == 64 && r.stderr.contains("did you mean '--from'?"), "\(r)")
  }

  @Test(arguments: [["frobnicate"], ["x"], ["list", "--colour"], ["list", "--zzzz"], ["help", "everything"]])
  func aFarNameGetsNoSuggestion(_ args: [String]) {
    let r = Sandbox().run(args)
    #expect(r.code == 64 && !r.stderr.contains("did you mean"), "\(r)")
    #expect(r.stderr.hasSuffix("hint: see 'msglog --help'\n"), "\(r)")
  }
}
