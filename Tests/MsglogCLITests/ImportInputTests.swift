import Foundation
import MsglogTestSupport
import Testing

#if canImport(Glibc)
  import Glibc
#endif

/// Where `import` reads its lines from, as a shell hands them over: a file,
/// stdin redirected from a file (from where its offset is), a pipe, a FIFO
/// or `<(…)` named as FILE. A pipe is read once but copied aside, since the
/// bulk build may give way to the ledger, which reads the lines again.
@Suite struct ImportInputTests {
  /// Runs `script` in bash, in the sandbox, with the binary's directory on PATH.
  func shell(_ script: String, in s: Sandbox) -> Run {
    let binDir = URL(fileURLWithPath: Sandbox.binary).deletingLastPathComponent().path
    return s.run(["-c", "export PATH='\(binDir)':$PATH; cd '\(s.dir)'; " + script], runner: "/bin/bash")
  }

  /// 30,000 appends with ids (several of the reader's pieces), and, when
  /// `editing`, an edit of the first at the end: the bulk build takes the
  /// appends, meets the edit, gives way, and the ledger starts again from line 1.
  func writeLines(_ s: Sandbox, editing: Bool = false) throws -> String {
    var lines = (0..<30_000).map {
      #"{"op":"append","id":"00000000-0000-4000-8000-\#(String(format: "%012x", $0))","text":"line \#($0) of the import, padded to a few dozen bytes"}"#
    }
    if editing { lines.append(#"{"op":"edit","id":"00000000-0000-4000-8000-000000000000","text":"edited"}"#) }
    let path = s.dir + "/lines.jsonl"
    try (lines.joined(separator: "\n") + "\n").write(toFile: path, atomically: false, encoding: .utf8)
    return path
  }

  func expectImported(
    _ s: Sandbox, _ r: Run, events: Int, firstText: String = "line 0 of the import, padded to a few dozen bytes"
  ) {
    #expect(r.code == 0 && r.stdout == "imported \(events) events; the head is seq \(events)\n", "\(r)")
    let verify = s.run("verify")
    #expect(verify.code == 0 && verify.stdout.hasPrefix("ok: \(events) events"), "\(verify)")
    let first = s.run(["list", "--json"]).lines.first.map { $0.contains(#""text":"\#(firstText)""#) }
    #expect(first == true, "the first item is not \(firstText)")
  }

  @Test(arguments: [false, true]) func aPipe(editing: Bool) throws {
    let s = Sandbox()
    let file = try writeLines(s, editing: editing)
    let before = try FileManager.default.contentsOfDirectory(atPath: s.dir).sorted()
    let r = shell("cat '\(file)' | msglog --db '\(s.db)' import", in: s)
    expectImported(
      s, r, events: editing ? 30_001 : 30_000,
      firstText: editing ? "edited" : "line 0 of the import, padded to a few dozen bytes")
    // The copy of the pipe had no name, and is gone.
    let after = try FileManager.default.contentsOfDirectory(atPath: s.dir).sorted()
    #expect(
      Set(after).subtracting(before).filter { !$0.hasPrefix("run-") } == [URL(fileURLWithPath: s.db).lastPathComponent])
  }

  @Test(arguments: [false, true]) func aFIFOOrAProcessSubstitutionNamedAsFile(editing: Bool) throws {
    let s = Sandbox()
    let file = try writeLines(s, editing: editing)
    let events = editing ? 30_001 : 30_000
    let substituted = shell("msglog --db '\(s.db)' import <(cat '\(file)')", in: s)
    expectImported(
      s, substituted, events: events,
      firstText: editing ? "edited" : "line 0 of the import, padded to a few dozen bytes")
    let other = Sandbox()
    #expect(mkfifo(other.dir + "/fifo", 0o600) == 0)
    let fifo = shell("cat '\(file)' > fifo & msglog --db '\(other.db)' import fifo; wait", in: other)
    expectImported(
      other, fifo, events: events, firstText: editing ? "edited" : "line 0 of the import, padded to a few dozen bytes")
  }

  /// Stdin redirected from a file is read as the file, from where its
  /// offset stands: a script that read the first line itself imports the rest.
  @Test func stdinRedirectedFromAFileAfterALineWasRead() throws {
    let s = Sandbox()
    let file = try writeLines(s)
    let r = shell("{ read -r first; msglog --db '\(s.db)' import; } < '\(file)'", in: s)
    expectImported(s, r, events: 29_999, firstText: "line 1 of the import, padded to a few dozen bytes")
  }

  /// Stdin redirected from a file is read to its end, as a filter reads
  /// it: the next command of the script reads what follows, not the lines again.
  @Test func stdinRedirectedFromAFileIsConsumed() throws {
    let s = Sandbox()
    let file = try writeLines(s)
    let r = shell("{ msglog --db '\(s.db)' import; echo \"left: $(wc -l)\"; } < '\(file)'", in: s)
    #expect(r.code == 0 && r.stdout.hasSuffix("left: 0\n"), "\(r)")
  }

  /// A pipe is kept in TMPDIR when the database has no directory of its
  /// own to keep it in (a PostgreSQL URL): seen in the process's open
  /// files while the pipe stalls, before any connection is tried.
  @Test func aPipeIsKeptInTMPDIR() throws {
    let s = Sandbox()
    let file = try writeLines(s)
    #expect(mkdir(s.dir + "/spool", 0o755) == 0)
    // The pipe stalls until the files have been looked at (a fifo opened
    // and closed ends it), once the copy is seen among them.
    #expect(mkfifo(s.dir + "/gate", 0o600) == 0)
    let r = shell(
      "{ head -3 '\(file)'; cat '\(s.dir)/gate'; } | TMPDIR='\(s.dir)/spool' msglog --db postgres://nobody@127.0.0.1:1/none"
        + " import 2>/dev/null & pid=$!; for i in $(seq 6000); do ls -l /proc/$pid/fd 2>/dev/null | grep -q '/spool/#'"
        + " && break; sleep 0.01; done; for fd in /proc/$pid/fd/*; do readlink \"$fd\"; done; : > '\(s.dir)/gate'; wait",
      in: s)
    #expect(r.stdout.contains("\(s.dir)/spool/#") && r.stdout.contains("(deleted)"), "\(r)")
  }

  /// A pipe whose temporary copy fills the disk part way is kept in
  /// memory instead, what was copied read back: the import goes on.
  @Test func aPipeOnAFullDiskIsKeptInMemory() throws {
    let s = Sandbox()
    let file = try writeLines(s)
    let full = s.dir + "/full"
    #expect(mkdir(full, 0o755) == 0)
    try #require(mountTmpfs(at: full, size: "256k"), "this test mounts a tmpfs and needs root")
    defer { unmount(full) }
    let r = shell("cat '\(file)' | TMPDIR='\(full)' msglog --db postgres://nobody@127.0.0.1:1/none import", in: s)
    // Past the copy: the lines were all read, and the import went on to its database.
    #expect(r.code == 1 && r.stderr.hasPrefix("msglog: cannot connect to postgres://nobody@127.0.0.1:1/none"), "\(r)")
  }

  /// A first import that another process's first write beats to the
  /// database: the import's write runs again, in theirs, and says what it
  /// appended once (the count was added up over both runs).
  @Test func aFirstImportBeatenToTheDatabaseCountsItsEventsOnce() throws {
    var raced = false
    for _ in 0..<5 where !raced {
      let s = Sandbox()
      let file = try writeLines(s, editing: true)  // the ledger's way
      let child = s.start(["import", file])
      // The other write is aimed at the import's first write: once the
      // import is making the new database (its staging directory, beside
      // the path or inside it, is there), the append makes it first.
      func staging() -> Bool {
        [s.dir, s.db].contains { path in
          ((try? FileManager.default.contentsOfDirectory(atPath: path)) ?? []).contains { $0.contains("creating-") }
        }
      }
      while child.process.isRunning, !staging() { usleep(1000) }  // how often to look, not a wait for time
      let other = s.run(["append", "other"])
      let r = child.finish()
      #expect(other.code == 0 && r.code == 0, "\(other) \(r)")
      let first = s.run(["log", "--json"]).lines.first ?? ""
      // The append made the database: the import ran again in it.
      raced = first.contains(#""seq":1"#) && first.contains("other")
      guard raced else { continue }
      #expect(r.stdout == "imported 30001 events; the head is seq 30002\n", "\(r)")
    }
    #expect(raced, "the append never reached the database first")
  }

  /// What would end an import anyway ends the copy of its pipe at once,
  /// before it fills a disk: a first line that does not parse, a line
  /// longer than any import line. A byte-order mark still starts a pipe.
  @Test func aPipeThatCannotImportIsRefusedAsItComes() throws {
    let s = Sandbox()
    let garbage = shell("yes garbage | timeout 30 msglog --db '\(s.db)' import", in: s)
    #expect(garbage.code == 1 && garbage.stderr.hasPrefix("msglog: line 1: invalid JSON"), "\(garbage)")
    let endless = shell("timeout 30 msglog --db '\(s.db)' import < /dev/zero", in: s)
    #expect(
      endless.code == 1
        && endless.stderr == "msglog: line 1: the line is longer than 16 MiB, which no import line can be\n",
      "\(endless)")
    let long = s.dir + "/long.jsonl"
    try (#"{"op":"append","text":"a"}"# + "\n" + String(repeating: "x", count: 17 << 20) + "\n")
      .write(toFile: long, atomically: false, encoding: .utf8)
    let file = s.run(["import", long])
    #expect(
      file.code == 1 && file.stderr == "msglog: line 2: the line is longer than 16 MiB, which no import line can be\n",
      "\(file)")
    #expect(!FileManager.default.fileExists(atPath: s.db))
    let marked = shell(#"printf '\357\273\277{"op":"append","text":"a"}\r\n' | msglog --db '\#(s.db)' import"#, in: s)
    #expect(marked.code == 0 && marked.stdout == "imported 1 event; the head is seq 1\n", "\(marked)")
  }

  /// A pipe holding a bad line: refused with its number, nothing written,
  /// whether the bad line comes before or after the bulk build gives way.
  @Test func aBadLineInAPipeWritesNothing() throws {
    let s = Sandbox()
    let file = try writeLines(s, editing: true)
    let r = shell("{ cat '\(file)'; echo '{\"op\":\"move\",\"from\":0}'; } | msglog --db '\(s.db)' import", in: s)
    #expect(r.code == 1 && r.stderr.hasPrefix("msglog: line 30002: "), "\(r)")
    #expect(!FileManager.default.fileExists(atPath: s.db))
  }
}
