import Foundation
import MsglogTestSupport
import Testing

/// `verify` and `verify --repair` of a large log show progress on a
/// terminal, as `import` does, and print nothing extra elsewhere. `script`
/// gives the command a real pseudo-terminal.
@Suite struct VerifyProgressTests {
  func seeded(_ count: Int) throws -> Sandbox {
    let s = Sandbox()
    let file = s.dir + "/lines.txt"
    try (0..<count).map { "line \($0)" }.joined(separator: "\n").write(toFile: file, atomically: true, encoding: .utf8)
    #expect(s.run(["-qec", "\(Sandbox.binary) --db \(s.db) append --lines < \(file) > /dev/null", "/dev/null"], runner: "/usr/bin/script").code == 0)
    return s
  }

  func onTerminal(_ s: Sandbox, _ command: String) -> Run {
    s.run(["-qec", "\(Sandbox.binary) --db \(s.db) \(command)", "/dev/null"], runner: "/usr/bin/script")
  }

  @Test func verifyShowsProgressOnATerminal() throws {
    let s = try seeded(30_000)
    let r = onTerminal(s, "verify")
    #expect(r.code == 0, "\(r)")
    #expect(r.stdout.contains("verifying [") && r.stdout.contains("/30000 events"), "\(r.stdout.suffix(400))")
    #expect(r.stdout.contains("/30000 ids"), "\(r.stdout.suffix(400))")
    #expect(r.stdout.hasSuffix("ok: 30000 events, 1 stream, 30000 live items\r\n"), "\(r.stdout.suffix(200))")
    // Not on a terminal: the report alone.
    let plain = s.run(["verify"])
    #expect(plain.stdout == "ok: 30000 events, 1 stream, 30000 live items\n" && plain.stderr.isEmpty, "\(plain)")
  }

  @Test func repairShowsEachStage() throws {
    let s = try seeded(30_000)
    // Damage a derived row: one item's id entry goes.
    let damage = python([
      "-c",
      "import lmdb, sys\nenv = lmdb.open(sys.argv[1], max_dbs=8)\nwith env.begin(write=True) as t:\n"
        + "    db = env.open_db(b'ids', txn=t)\n    k = next(iter(t.cursor(db=db)))[0]\n    t.delete(k, db=db)",
      s.db,
    ])
    #expect(damage.code == 0, "\(damage)")
    let r = onTerminal(s, "verify --repair")
    #expect(r.code == 0, "\(r)")
    for stage in ["verifying [", "rebuilding [", "checking the rebuild ["] {
      #expect(r.stdout.contains(stage), "no '\(stage)' in \(r.stdout.suffix(400))")
    }
    #expect(r.stdout.contains("repaired: table ids:"), "\(r.stdout.suffix(400))")
    #expect(s.run(["verify"]).code == 0)
  }
}
