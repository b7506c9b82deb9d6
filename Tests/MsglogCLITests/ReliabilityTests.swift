import Foundation
import MsglogTestSupport
import Testing

#if canImport(Glibc)
  import Glibc
#endif

/// Never lose a message: kill -9 mid-write, a map that must grow under two
/// writers, a full disk, killed readers, damaged records and hostile text,
/// each with real processes. `MSGLOG_STRESS=1` runs the long variants.
@Suite struct ReliabilityTests {
  static let stress = ProcessInfo.processInfo.environment["MSGLOG_STRESS"] != nil

  func json(_ line: some StringProtocol) -> [String: Any] {
    (try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any]) ?? [:]
  }

  func headSeq(_ s: Sandbox) -> Int {
    let r = s.run(["log", "--all", "--json"])
    return r.lines.last.map { json($0)["seq"] as? Int ?? 0 } ?? 0
  }

  /// `kill -9` a writer at random moments: single appends, `append --lines`
  /// batches and `import` batches. After each: verify is clean, every
  /// acknowledged event is there, and a batch is all there or not at all.
  @Test func killedWritersLoseNothingAndHalfApplyNothing() throws {
    let iterations = Self.stress ? 1000 : 100
    let batchSize = 300
    let s = Sandbox()
    s.append("seed")
    var head = 1
    var killed = 0, completed = 0
    var acknowledged: Set<String> = []
    for i in 0..<iterations {
      let kind = i % 3
      let args: [String]
      var input = Data()
      switch kind {
      case 0:
        args = ["append", "--json", "--", "single-\(i)"]
      case 1:
        args = ["append", "--lines", "--json", "--stream", "batch"]
        input = Data((0..<batchSize).map { "b\(i)-\($0)" }.joined(separator: "\n").utf8)
      default:
        args = ["import", "--json"]
        input = Data(
          (0..<batchSize).map { #"{"op":"append","stream":"imported","text":"b\#(i)-\#($0)"}"# }
            .joined(separator: "\n").utf8)
      }
      let child = s.start(args, stdin: input)
      // Deliberate: the kill lands at a random point (the scenario); what
      // is checked holds wherever it lands.
      usleep(UInt32.random(in: 0...40_000))
      kill(child.process.processIdentifier, SIGKILL)
      let r = child.finish()
      let wasKilled = child.process.terminationReason == .uncaughtSignal
      if wasKilled { killed += 1 } else { completed += 1 }
      if !wasKilled {
        #expect(r.code == 0, "iteration \(i): \(r)")
        if kind < 2 { for line in r.lines { acknowledged.insert(json(line)["id"] as! String) } }
      }
      let verify = s.run("verify")
      #expect(verify.code == 0, "iteration \(i) (killed: \(wasKilled)): \(verify)")
      // What this iteration added: all of it, or nothing.
      let added = s.run(["log", "--all", "--json", "--from", String(head + 1)]).lines.map { json($0) }
      let expected = kind == 0 ? 1 : batchSize
      #expect(added.count == 0 || added.count == expected, "iteration \(i): \(added.count) events of \(expected)")
      if !wasKilled { #expect(added.count == expected, "iteration \(i) was acknowledged") }
      head += added.count
      let marker = kind == 0 ? "single-\(i)" : "b\(i)-"
      #expect(added.allSatisfy { ($0["text"] as? String)?.hasPrefix(marker) == true })
    }
    // Every acknowledged id is in the log.
    let logged = Set(s.run(["log", "--all", "--json"]).lines.map { json($0)["id"] as! String })
    #expect(acknowledged.isSubset(of: logged), "\(acknowledged.subtracting(logged).count) acknowledged ids are missing")
    #expect(killed > 0, "no kill landed mid-command")
    print(
      "crash safety: \(iterations) writers, \(killed) killed with SIGKILL, \(completed) completed, \(acknowledged.count) acknowledged ids all present"
    )
  }

  /// Two processes append large messages at once from a 1 MiB map: the map
  /// doubles several times, and nobody sees MDB_MAP_FULL or MDB_MAP_RESIZED.
  @Test func twoWritersGrowTheMapTogether() throws {
    let s = Sandbox()
    s.append("seed")
    let perWriter = Self.stress ? 40 : 12
    let text = Data(String(repeating: "m", count: 200_000).utf8)
    final class Failures: @unchecked Sendable {
      let lock = NSLock()
      var runs: [Run] = []
    }
    let failures = Failures()
    DispatchQueue.concurrentPerform(iterations: 2) { writer in
      for _ in 0..<perWriter {
        let r = s.run(["append", "--stream", "w\(writer)"], stdin: text)
        if r.code != 0 || !r.stderr.isEmpty {
          failures.lock.lock()
          failures.runs.append(r)
          failures.lock.unlock()
        }
      }
    }
    #expect(failures.runs.isEmpty, "\(failures.runs.prefix(3))")
    #expect(s.run("verify").code == 0)
    let streams = json(s.run("streams", "--json").stdout)["streams"] as! [[String: Any]]
    #expect(streams.map { $0["count"] as! Int } == [1, perWriter, perWriter])
    let mapSize = try mapSizeOf(s.db)
    let growths = Int(log2(Double(mapSize) / Double(1 << 20)))
    #expect(growths >= 3, "map is \(mapSize) bytes")
    print(
      "map growth: 2 writers, \(2 * perWriter) appends of 200 kB, map grew \(growths) times to \(mapSize >> 20) MiB")
  }

  func mapSizeOf(_ db: String) throws -> Int {
    let p = Process()
    p.executableURL = URL(fileURLWithPath: "/usr/bin/python3")
    p.arguments = [
      "-c", "import lmdb, sys; print(lmdb.open(sys.argv[1], max_dbs=8, readonly=True, lock=False).info()['map_size'])",
      db,
    ]
    let pipe = Pipe()
    p.standardOutput = pipe
    try p.run()
    let out = pipe.fileHandleForReading.readDataToEndOfFile()
    p.waitUntilExit()
    return Int(String(decoding: out, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)) ?? 0
  }

  /// On a full disk the write fails with a clear message and exit 1, and
  /// everything acknowledged before is intact.
  @Test func aFullDiskFailsCleanly() throws {
    let s = Sandbox()
    let mountPoint = s.dir + "/small-disk"
    try FileManager.default.createDirectory(atPath: mountPoint, withIntermediateDirectories: false)
    let mount = Process()
    mount.executableURL = URL(fileURLWithPath: "/bin/mount")
    mount.arguments = ["-t", "tmpfs", "-o", "size=3m", "tmpfs", mountPoint]
    try mount.run()
    mount.waitUntilExit()
    try #require(mount.terminationStatus == 0, "this test mounts a 3 MiB tmpfs and needs root")
    defer {
      let umount = Process()
      umount.executableURL = URL(fileURLWithPath: "/bin/umount")
      umount.arguments = [mountPoint]
      try? umount.run()
      umount.waitUntilExit()
    }
    let db = mountPoint + "/db"
    let text = Data(String(repeating: "d", count: 300_000).utf8)
    var acknowledged: [String] = []
    var failure: Run? = nil
    for _ in 0..<20 {
      let r = s.run(["--db", db, "append"], stdin: text)
      if r.code != 0 {
        failure = r
        break
      }
      acknowledged.append(r.stdout.trimmingCharacters(in: .newlines))
    }
    let r = try #require(failure, "20 appends of 300 kB fit a 3 MiB disk?")
    #expect(r.code == 1 && r.stderr.hasPrefix("msglog: the disk is full"), "\(r)")
    #expect(r.stdout.isEmpty)
    #expect(s.run(["--db", db, "verify"]).code == 0)
    let listed = s.run(["--db", db, "list", "--json"])
    let ids = (json(listed.stdout)["items"] as! [[String: Any]]).map { $0["id"] as! String }
    #expect(ids == acknowledged)
  }

  /// Under a file-size limit (`ulimit -f`, systemd's LimitFSIZE) a write
  /// that meets it fails with exit 1 and says so — it was killed by
  /// SIGXFSZ (exit 153) when the file was at the limit already, and said as
  /// an I/O error when the limit cut its write short — and everything
  /// acknowledged before is intact. Both: a limit at the file's size, then
  /// one above it.
  @Test func aFileSizeLimitFailsCleanly() throws {
    let s = Sandbox()
    var acknowledged = (0..<3).map { s.append("before the limit \($0)") }
    let text = Data(String(repeating: "f", count: 300_000).utf8)
    let size = try #require(try FileManager.default.attributesOfItem(atPath: s.db + "/data.mdb")[.size] as? Int)
    // dash's ulimit -f counts 512-byte blocks; LMDB's file is whole pages.
    for blocks in [size / 512, size / 512 + 4096] {
      var failures: [Run] = []
      for _ in 0..<20 where failures.count < 2 {
        let r = s.run(
          ["-c", "ulimit -f \(blocks) && exec \"$0\" \"$@\"", Sandbox.binary, "append"], stdin: text,
          runner: "/bin/sh")
        if r.code == 0 { acknowledged.append(r.stdout.trimmingCharacters(in: .newlines)) } else { failures.append(r) }
      }
      #expect(failures.count == 2, "\(blocks) blocks: 20 appends of 300 kB fit?")
      for r in failures {
        #expect(
          r.code == 1
            && r.stderr.hasPrefix(
              "msglog: database error: the database file could not be written past this process's file-size limit"),
          "\(blocks) blocks: \(r)")
      }
    }
    #expect(s.run(["verify"]).code == 0)
    let listed = s.run(["list", "--json"])
    let ids = (json(listed.stdout)["items"] as! [[String: Any]]).map { $0["id"] as! String }
    #expect(ids == acknowledged)
  }

  /// Started without stdin or stdout (`<&-`, `>&-`), a command says so and
  /// changes nothing: the descriptors are held by /dev/null the wrong way
  /// round, so nothing the process opens takes their numbers.
  @Test func closedStandardDescriptorsAreSaidClosed() throws {
    let s = Sandbox()
    s.append("one")
    let before = s.contents()
    let importing = s.run(["-c", "exec \"$0\" \"$@\" <&-", Sandbox.binary, "import"], runner: "/bin/sh")
    #expect(importing.code == 1 && importing.stderr == "msglog: cannot read stdin: it is closed\n", "\(importing)")
    // Read whole, not spooled: the same words (it said "bad file descriptor").
    for args in [["append"], ["append", "--lines"]] {
      let r = s.run(["-c", "exec \"$0\" \"$@\" <&-", Sandbox.binary] + args, runner: "/bin/sh")
      #expect(r.code == 1 && r.stderr == "msglog: cannot read stdin: it is closed\n", "\(args): \(r)")
    }
    let listing = s.run(["-c", "exec \"$0\" \"$@\" >&-", Sandbox.binary, "list"], runner: "/bin/sh")
    #expect(listing.code == 1 && listing.stderr.hasPrefix("msglog: write error: "), "\(listing)")
    #expect(s.contents() == before)
  }

  /// Readers killed while holding a read transaction (blocked on a full pipe)
  /// must not use up LMDB's 126 reader slots.
  @Test func killedReadersDoNotExhaustReaderSlots() throws {
    let s = Sandbox()
    let lines = (0..<2000).map { #"{"op":"append","text":"\#($0) \#(String(repeating: "r", count: 100))"}"# }
    #expect(s.run(["import"], stdin: Data(lines.joined(separator: "\n").utf8)).code == 0)
    // A reader that stays alive keeps the environment open throughout: were
    // nobody holding it, the next process to open it would reset the whole
    // reader table, and dead slots would never pile up.
    let keeper = Process()
    keeper.executableURL = URL(fileURLWithPath: Sandbox.binary)
    keeper.arguments = ["--db", s.db, "log", "--all"]
    let keeperPipe = Pipe()
    keeper.standardOutput = keeperPipe
    try keeper.run()
    _ = keeperPipe.fileHandleForReading.readData(ofLength: 1)
    defer {
      kill(keeper.processIdentifier, SIGKILL)
      keeper.waitUntilExit()
    }
    let total = 130  // more than LMDB's 126 reader slots
    var killed = 0
    while killed < total {
      var readers: [Process] = []
      var pipes: [Pipe] = []
      for _ in 0..<10 {
        let p = Process()
        p.executableURL = URL(fileURLWithPath: Sandbox.binary)
        p.arguments = ["--db", s.db, "log", "--all"]
        let pipe = Pipe()  // never read past the first bytes: the reader blocks mid-transaction
        p.standardOutput = pipe
        try p.run()
        _ = pipe.fileHandleForReading.readData(ofLength: 1)
        readers.append(p)
        pipes.append(pipe)
      }
      for p in readers {
        kill(p.processIdentifier, SIGKILL)
        p.waitUntilExit()
        killed += 1
      }
      _ = pipes
    }
    #expect(s.run("append", "still writable").code == 0)
    let r = s.run("list")
    #expect(r.code == 0 && r.lines.count == 2001, "\(r.stderr)")
    #expect(s.run("verify").code == 0)
  }

  /// A byte flipped in a record on disk: verify names the seq, and replay,
  /// log, list and export refuse at it rather than print altered data.
  @Test func aDamagedRecordIsNeverServed() throws {
    let s = Sandbox()
    s.append("alpha")
    s.append("MARKER-bravo-7q")
    s.append("charlie")
    let path = s.db + "/data.mdb"
    var data = try Data(contentsOf: URL(fileURLWithPath: path))
    var from = data.startIndex
    while let range = data.range(of: Data("MARKER-bravo-7q".utf8), in: from..<data.endIndex) {
      data[range.lowerBound + 7] ^= 0x20
      from = range.upperBound
    }
    try data.write(to: URL(fileURLWithPath: path))
    var r = s.run("verify")
    #expect(r.code == 1 && r.stdout.hasPrefix("seq 2: corrupted record: checksum mismatch"), "\(r)")
    #expect(r.stderr.contains("the log itself is damaged"), "\(r)")
    for args in [["replay"], ["list"], ["export"], ["replay", "--at", "2"]] {
      r = s.run(args)
      #expect(r.code == 1 && r.stderr.hasPrefix("msglog: corrupted record at seq 2"), "\(args): \(r)")
      #expect(!r.stdout.contains("Bravo"), "\(args) served altered data")
    }
    r = s.run("log")
    #expect(r.code == 1 && r.lines.count == 1 && r.lines[0].hasSuffix("alpha"), "\(r)")
    #expect(s.run("replay", "--at", "1").code == 0)
    r = s.run("verify", "--repair")
    #expect(r.code == 1 && r.stderr.hasPrefix("msglog: the log itself is damaged, so --repair cannot help"), "\(r)")
  }

  /// Damaged derived tables are named by verify and rebuilt by verify --repair.
  @Test func derivedTablesAreRebuiltFromTheLog() throws {
    let s = Sandbox()
    let copy = s.dir + "/board.jsonl"
    try FileManager.default.copyItem(atPath: fixture("colour-board.jsonl"), toPath: copy)
    #expect(s.run("import", copy).code == 0)
    let before = s.run("list", "--json").stdout
    // Damage three tables at once: the head's counters, the order tree, an id row.
    for damage in [["flip", "head:main", "10"], ["flip", "node:main:root", "120"], ["delete", "id:live"]] {
      let r = python([fixture("damage.py"), s.db] + damage)
      #expect(r.code == 0, "\(r)")
    }
    var r = s.run("verify")
    #expect(r.code == 1, "\(r)")
    #expect(r.stdout.contains("table heads: the head of stream 'main' fails its checksum"), "\(r)")
    #expect(r.stdout.contains("table ids:"), "\(r)")
    #expect(r.stderr.contains("'msglog verify --repair' rebuilds the derived tables"), "\(r)")
    r = s.run("verify", "--repair")
    #expect(r.code == 0 && r.stdout.hasSuffix("ok: 35 events, 1 stream, 24 live items\n"), "\(r)")
    #expect(s.run("list", "--json").stdout == before)
  }

  /// Every control character is stored exactly and shown escaped; hostile
  /// names are refused.
  @Test func hostileTextIsStoredExactlyOrRefused() throws {
    let s = Sandbox()
    var scalars = (0x00...0x1F).map { Unicode.Scalar($0)! } + [Unicode.Scalar(0x7F)!]
    scalars +=
      (0x80...0x9F).map { Unicode.Scalar($0)! } + [Unicode.Scalar(0x2028)!, Unicode.Scalar(0x2029)!, "\\", "\""]
    var text = String.UnicodeScalarView()
    text.append(contentsOf: scalars)
    let message = "x" + String(text) + "y"
    var r = s.run(["append"], stdin: Data(message.utf8))
    #expect(r.code == 0, "\(r)")
    r = s.run("list", "--json")
    let items = json(r.stdout)["items"] as! [[String: Any]]
    #expect(items.first?["text"] as? String == message)
    r = s.run("list")
    #expect(r.lines.count == 1)
    #expect(!r.stdout.utf8.contains { $0 < 0x20 && $0 != 0x0A }, "a control byte reached the terminal")
    #expect(!r.stdout.unicodeScalars.contains { (0x80...0x9F).contains($0.value) || $0.value == 0x2028 })
    // A stream name with a NUL (only import can carry one) is refused.
    r = s.run(["import"], stdin: Data(#"{"op":"append","text":"x","stream":"a\u0000b"}"#.utf8))
    #expect(
      r.code == 1 && r.stderr.hasPrefix("msglog: line 1: stream name 'a\\x00b' contains a control character"), "\(r)")
    // 1 MiB is accepted, 1 MiB + 1 byte is refused.
    #expect(s.run(["append"], stdin: Data(repeating: 0x41, count: 1 << 20)).code == 0)
    r = s.run(["append"], stdin: Data(repeating: 0x41, count: (1 << 20) + 1))
    #expect(r.code == 64, "\(r)")
  }
}
