import Foundation
import MsglogTestSupport
import Testing

#if canImport(Glibc)
  import Glibc
#endif

/// A process killed while it opens the database as its only user. LMDB's
/// first opener takes an exclusive lock on `lock.mdb`, resets the lock
/// file's header, reads the meta pages and only then writes the last
/// transaction's id there and shares the lock; a process waiting for that
/// lock when the opener died took the stale header for a live one, and its
/// write began from an older meta page: its commit, printed with its seq,
/// vanished with the one before it, and `verify` said ok (an attacking
/// helper: 9 runs of 9). The opener is slowed under strace (each read of
/// the file 0.3 s) so that the kill lands there.
@Suite struct OpeningRaceTests {
  /// The pid holding LMDB's exclusive lock on `lockFile` (byte 0 for
  /// writing, in `/proc/locks`), once one does.
  static func exclusiveHolder(of lockFile: String, seconds: Double = 20) -> pid_t? {
    let deadline = Date().addingTimeInterval(seconds)
    while Date() < deadline {
      if let lock = RecordLock.held(on: lockFile).first(where: { $0.writes && $0.start == "0" && $0.end == "0" }) {
        return lock.pid
      }
      usleep(2_000)
    }
    return nil
  }

  @Test func aProcessKilledWhileItOpensTheDatabaseLosesNoCommit() throws {
    let s = Sandbox(.lmdb)
    for i in 1...3 { #expect(s.run("append", "before-\(i)").code == 0) }
    let opener = s.start(
      [
        "-f", "-o", "/dev/null", "-e", "trace=pread64", "-e", "inject=pread64:delay_exit=300000", Sandbox.binary,
        "list",
      ], runner: "/usr/bin/strace")
    defer { kill(opener.process.processIdentifier, SIGKILL) }
    let holder = try #require(Self.exclusiveHolder(of: s.db + "/lock.mdb"), "the opener never took LMDB's lock")
    let writer = s.start(["--json", "append", "acknowledged"])
    // The writer waits for the opener (it does not finish meanwhile).
    usleep(300_000)
    kill(holder, SIGKILL)
    kill(opener.process.processIdentifier, SIGKILL)
    _ = opener.finish()
    let written = writer.finish()
    #expect(written.code == 0 && written.stdout.contains(#""seq":4"#), "\(written)")
    let log = s.run("log", "--json")
    #expect(log.lines.count == 4, "\(log)")
    for (seq, text) in [(1, "before-1"), (2, "before-2"), (3, "before-3"), (4, "acknowledged")] {
      #expect(log.stdout.contains(#""seq":\#(seq),"#) && log.stdout.contains(#""text":"\#(text)""#), "\(log)")
    }
    #expect(s.run("append", "after").stdout.isEmpty == false)
    #expect(s.run("log").lines.count == 5)
    #expect(s.run("verify").code == 0)
  }
}
