import Foundation
import MsglogTestSupport
import Testing

@testable import MsglogCLI

/// Completion scripts, the man page and colour — all generated from the one
/// declaration table, and exercised by the real shells and terminals.
@Suite struct ShellTests {
  /// A database with stream names a completion must keep whole.
  static func streams() -> Sandbox {
    let s = Sandbox()
    for name in ["main", "ops board", "中文"] { #expect(s.run(["append", "--stream", name, "x"]).code == 0) }
    return s
  }

  /// Runs `script` in `shell` with the binary's directory on PATH.
  func run(_ shell: String, _ script: String, in s: Sandbox) -> Run {
    let binDir = URL(fileURLWithPath: Sandbox.binary).deletingLastPathComponent().path
    return s.run(
      ["-c", "export PATH='\(binDir)':$PATH; cd '\(s.dir)'; " + script], runner: "/usr/bin/\(shell)")
  }

  /// What bash offers for the line `words` (the last one being typed),
  /// after `options` (a user's shell options); it says nothing on stderr.
  func bashComplete(
    _ words: [String], in s: Sandbox, options: String = "", sourceLocation: SourceLocation = #_sourceLocation
  ) -> [String] {
    let array = words.map { "'\($0)'" }.joined(separator: " ")
    let r = run(
      "bash",
      options + "source <(msglog completions bash); COMP_WORDS=(\(array)); COMP_CWORD=\(words.count - 1); _msglog; "
        + "printf '%s\\n' \"${COMPREPLY[@]}\"", in: s)
    #expect(r.code == 0 && r.stderr.isEmpty, "\(r)", sourceLocation: sourceLocation)
    return r.lines.filter { !$0.isEmpty }
  }

  @Test func bashCompletesCommandsOptionsAndStreamNames() {
    let s = Self.streams()
    func complete(_ words: [String]) -> [String] { bashComplete(words, in: s) }
    #expect(complete(["msglog", "ap"]) == ["append"])
    #expect(complete(["msglog", "--db", s.db, "--stream", ""]) == ["main", "ops\\ board", "中文"])
    #expect(complete(["msglog", "list", "--stream", "o"]) == ["ops\\ board"])
    #expect(complete(["msglog", "move", "--e"]) == ["--expect-version"])
    #expect(complete(["msglog", "log", "-"]).contains("--follow"))
    #expect(!complete(["msglog", "move", "-"]).contains("--sender"))
    #expect(complete(["msglog", "completions", ""]) == ["bash", "zsh", "fish"])
    // As bash splits --db=X (at the '=' of COMP_WORDBREAKS): the command
    // after it is found, and a value after '=' completes as after a space
    // (a review found the value taken for the command, and nothing offered).
    #expect(complete(["msglog", "--db", "=", s.db, "list", "--st"]) == ["--stream"])
    #expect(complete(["msglog", "--db", "=", s.db, "list", "--stream", "=", "o"]) == ["ops\\ board"])
    #expect(complete(["msglog", "--db", "=", s.db, "--stream", "="]) == ["main", "ops\\ board", "中文"])
  }

  /// A stream name is anyone's who may write to the database: bash offers
  /// it as one word, quoted, and never runs what it holds. (Through
  /// `compgen -W`, a stream named `$(touch PWNED)` ran at a tab, and one
  /// with an apostrophe broke every stream's completion.)
  @Test func bashOffersAStreamNameAndNeverRunsIt() {
    let s = Sandbox()
    for name in ["$(touch PWNED)", "it's", "a;b `id`", "main", "ops board"] {
      #expect(s.run(["append", "--stream", name, "x"]).code == 0)
    }
    func complete(_ typed: String) -> [String] { bashComplete(["msglog", "--stream", typed], in: s) }
    #expect(complete("") == [#"\$\(touch\ PWNED\)"#, #"a\;b\ \`id\`"#, #"it\'s"#, "main", #"ops\ board"#])
    #expect(complete("i") == [#"it\'s"#])
    #expect(complete("m") == ["main"])
    #expect(!FileManager.default.fileExists(atPath: s.dir + "/PWNED"), "a tab ran a stream name")
    // A user's shell options change nothing: `set -u` with no --db on the
    // line (an unset array element stopped the completion), and
    // nocasematch (a name is offered for what was typed, case and all).
    let strict = "set -u; shopt -s nocasematch; "
    #expect(bashComplete(["msglog", "--stream", "M"], in: s, options: strict) == [])
    #expect(bashComplete(["msglog", "--stream", "m"], in: s, options: strict) == ["main"])
    // Each offered word, put on a command line, is the name itself.
    let offered = complete("").joined(separator: " ")
    #expect(FileManager.default.createFile(atPath: s.dir + "/words", contents: Data(offered.utf8)))
    let r = run("bash", #"eval "set -- $(cat words)"; printf '%s\n' "$@""#, in: s)
    #expect(r.lines == ["$(touch PWNED)", "a;b `id`", "it's", "main", "ops board"], "\(r)")
    #expect(!FileManager.default.fileExists(atPath: s.dir + "/PWNED"))
  }

  @Test func fishCompletesStreamNames() {
    let s = Self.streams()
    let r = run("fish", "source (msglog completions fish | psub); complete -C 'msglog --db \(s.db) --stream '", in: s)
    #expect(r.code == 0, "\(r)")
    #expect(r.lines.map { String($0.prefix { $0 != "\t" }) } == ["main", "ops board", "中文"], "\(r)")
    let commands = run("fish", "source (msglog completions fish | psub); complete -C 'msglog di'", in: s)
    #expect(commands.stdout.hasPrefix("diff\t"), "\(commands)")
  }

  /// zsh cannot be driven without a terminal; its script must at least parse.
  @Test func zshScriptParses() {
    let s = Sandbox()
    let r = run("zsh", "msglog completions zsh > c.zsh && zsh -n c.zsh && grep -q '_msglog_streams' c.zsh", in: s)
    #expect(r.code == 0 && r.stderr.isEmpty, "\(r)")
  }

  /// The words zsh offers for each line, as TAB at its end in a terminal
  /// gives them (zsh in a pseudo-terminal, Fixtures/complete.zsh). Whatever
  /// the completion writes on stderr (zsh's own complaints about the
  /// script) is a failure.
  func zshComplete(_ lines: [String], in s: Sandbox) -> [String: [String]] {
    let driver = repositoryRoot + "/Fixtures/complete.zsh"
    let quoted = lines.map { "'\($0)'" }.joined(separator: " ")
    let r = run("zsh", "msglog completions zsh > _msglog && timeout 60 zsh -f '\(driver)' \(quoted)", in: s)
    #expect(r.code == 0 && r.stderr.isEmpty, "\(r)")
    return Self.offered(r, by: "zsh")
  }

  /// The words offered for each line, from output that names each line as
  /// "> LINE" before its words (fish's descriptions, after a tab, dropped).
  static func offered(_ r: Run, by shell: String) -> [String: [String]] {
    var offered: [String: [String]] = [:]
    var line = ""
    for output in r.lines {
      if output.hasPrefix("> ") {
        line = String(output.dropFirst(2))
        offered[line] = []
      } else if output.hasPrefix("error: ") {
        Issue.record("\(shell), completing '\(line)': \(output)")
      } else if !output.isEmpty {
        offered[line, default: []].append(String(output.prefix { $0 != "\t" }))
      }
    }
    return offered
  }

  /// The words each shell offers for each line (as typed, TAB at its end),
  /// by shell.
  func offeredByEveryShell(_ lines: [String], in s: Sandbox) -> [String: [String: [String]]] {
    let bashLines = lines.map { line in
      let words = line.split(separator: " ", omittingEmptySubsequences: false).map { "'\($0)'" }
      return "COMP_WORDS=(\(words.joined(separator: " "))); COMP_CWORD=\(words.count - 1); COMPREPLY=(); _msglog; "
        + "echo '> \(line)'; printf '%s\\n' \"${COMPREPLY[@]}\"\n"
    }
    let bash = run("bash", "source <(msglog completions bash)\n" + bashLines.joined(), in: s)
    #expect(bash.code == 0 && bash.stderr.isEmpty, "\(bash)")
    let fishLines = lines.map { "echo '> \($0)'; complete -C '\($0)'\n" }
    let fish = run("fish", "source (msglog completions fish | psub)\n" + fishLines.joined(), in: s)
    #expect(fish.code == 0 && fish.stderr.isEmpty, "\(fish)")
    return [
      "bash": Self.offered(bash, by: "bash"), "zsh": zshComplete(lines, in: s), "fish": Self.offered(fish, by: "fish"),
    ]
  }

  /// Every shell offers a command the options its help lists, and no
  /// other: one offered and then refused (`streams --stream`, exit 64) is
  /// worse than none.
  @Test func everyShellOffersACommandItsOwnOptions() {
    let names = CommandName.allCases.map(\.rawValue)
    let offered = offeredByEveryShell(names.map { "msglog \($0) --" }, in: Sandbox())
    for name in names {
      let listed = CommandDeclaration.named(name)!.listedOptions.map { "--" + $0.name }.sorted()
      for (shell, offered) in offered {
        #expect(offered["msglog \(name) --"]?.sorted() == listed, "\(shell) after 'msglog \(name) --'")
      }
    }
  }

  /// Every shell completes an option's value and an argument alike: their
  /// words, files, directories, or nothing.
  @Test func everyShellCompletesValuesAlike() throws {
    let s = Sandbox()
    try Data().write(to: URL(fileURLWithPath: s.dir + "/cert.pem"))
    try FileManager.default.createDirectory(atPath: s.dir + "/backups", withIntermediateDirectories: false)
    let expected = [
      "msglog serve --log-format ": ["json", "none", "text"], "msglog serve --log-format j": ["json"],
      "msglog serve --tls-cert ce": ["cert.pem"], "msglog serve --tls-key ce": ["cert.pem"],
      "msglog sync --cacert ce": ["cert.pem"], "msglog import ce": ["cert.pem"], "msglog backup ba": ["backups"],
      "msglog completions ": ["bash", "fish", "zsh"], "msglog serve --listen ": [],
    ]
    for (shell, offered) in offeredByEveryShell(Array(expected.keys), in: s) {
      for (line, words) in expected {
        #expect(
          offered[line]?.map { $0.hasSuffix("/") ? String($0.dropLast()) : $0 }.sorted() == words,
          "\(shell) after '\(line)'")
      }
    }
  }

  /// A spec _arguments cannot read fails every TAB, so each command's
  /// options are completed once, short and long names alike.
  @Test func zshCompletesCommandsAndOptions() {
    let s = Sandbox()
    let offered = zshComplete(["msglog ", "msglog li", "msglog list -", "msglog log --f", "msglog status -"], in: s)
    #expect(offered["msglog "]?.count == 27 && offered["msglog "]?.contains("serve") == true, "\(offered)")
    #expect(offered["msglog li"] == ["list"])
    #expect(offered["msglog list -"] == ["--db", "--help", "--json", "--stream", "-h"])
    #expect(offered["msglog log --f"] == ["--follow", "--from"])
    #expect(offered["msglog status -"] == ["--clear", "--db", "--help", "--json", "--verbose", "-h", "-v"])
  }

  /// An option's value: words, files, stream names, or nothing to offer
  /// (`--listen ADDR:PORT`, whose colon must not end zsh's message).
  @Test func zshCompletesOptionValues() throws {
    let s = Self.streams()
    try Data().write(to: URL(fileURLWithPath: s.dir + "/cert.pem"))
    let offered = zshComplete(
      [
        "msglog serve --listen ", "msglog serve --log-format ", "msglog serve --tls-cert ce", "msglog list --stream o",
        "msglog list --db none --stream ",
      ],
      in: s)
    #expect(offered["msglog serve --listen "] == [])
    #expect(offered["msglog serve --log-format "] == ["json", "none", "text"])
    #expect(offered["msglog serve --tls-cert ce"] == ["cert.pem"])
    #expect(offered["msglog list --stream o"] == ["ops board"])
    #expect(offered["msglog list --db none --stream "] == [], "no database, no stream names (not an empty one)")
  }

  /// Options before the command, and their values, are passed over to
  /// find it (`alias team='msglog --db team.lmdb'`); a --db among them
  /// names the database whose streams are offered.
  @Test func zshFindsTheCommandAfterGlobalOptions() {
    let s = Self.streams()
    let other = Sandbox()
    #expect(other.run(["append", "--stream", "other board", "x"]).code == 0)
    let db = "--db \(other.db)"
    let offered = zshComplete(
      [
        "msglog \(db) list --", "msglog --json list --", "msglog \(db) --json log --f", "msglog --json ",
        "msglog \(db) list --stream o", "msglog --stream main -", "msglog --db=\(other.db) list --",
        "msglog --db=\(other.db) list --stream=o",
      ], in: s)
    #expect(offered["msglog \(db) list --"] == ["--db", "--help", "--json", "--stream"])
    #expect(offered["msglog --json list --"] == ["--db", "--help", "--json", "--stream"])
    #expect(offered["msglog \(db) --json log --f"] == ["--follow", "--from"])
    #expect(offered["msglog --json "]?.count == 27, "\(offered)")
    #expect(offered["msglog \(db) list --stream o"] == ["other board"])
    #expect(offered["msglog --stream main -"] == ["--db", "--help", "--json", "--version", "-h"])
    #expect(offered["msglog --db=\(other.db) list --"] == ["--db", "--help", "--json", "--stream"])
    #expect(offered["msglog --db=\(other.db) list --stream=o"] == ["other board"])
  }

  @Test func unknownShellIsAUsageError() {
    let r = Sandbox().run("completions", "tcsh")
    #expect(r.code == 64 && r.stderr.hasPrefix("msglog: unknown shell 'tcsh'"), "\(r)")
  }

  /// docs/msglog.1 is what the binary generates, and it renders without a warning.
  @Test func theManPageIsGeneratedAndRenders() throws {
    let s = Sandbox()
    let generated = s.run(["help", "--man"])
    #expect(generated.code == 0)
    let committed = try String(contentsOfFile: repositoryRoot + "/docs/msglog.1", encoding: .utf8)
    #expect(generated.stdout == committed, "docs/msglog.1 is stale: run 'msglog help --man > docs/msglog.1'")
    let r = run(
      "sh", "msglog help --man > msglog.1 && groff -man -ww -Tutf8 msglog.1 > page.txt && grep -c . page.txt", in: s)
    #expect(r.code == 0 && r.stderr.isEmpty, "\(r)")
    for command in ["append", "move", "diff", "completions", "verify"] {
      #expect(try String(contentsOfFile: s.dir + "/page.txt", encoding: .utf8).contains(command))
    }
  }

  /// On a terminal the short id and sender are dimmed; not with NO_COLOR,
  /// and never into a pipe or a file.
  @Test func colourOnlyOnATerminal() {
    let s = Sandbox()
    s.append("hello", sender: "ann")
    let binary = Sandbox.binary
    let tty = s.run(["-qec", "\(binary) --db \(s.db) list", "/dev/null"], runner: "/usr/bin/script")
    #expect(tty.stdout.contains("\u{1B}[2m"), "\(tty)")
    #expect(tty.stdout.contains("  ann\u{1B}[0m  hello"), "\(tty)")
    let noColour = s.run(
      ["-qec", "NO_COLOR=1 \(binary) --db \(s.db) list", "/dev/null"], runner: "/usr/bin/script")
    #expect(!noColour.stdout.contains("\u{1B}["), "\(noColour)")
    let piped = s.run(["list"])
    #expect(!piped.stdout.contains("\u{1B}["), "\(piped)")
  }
}
