import Foundation
import MsglogTestSupport
import Testing

#if canImport(Glibc)
  import Glibc
#endif

/// `purge` on LMDB: after it, no file of the database's directory holds an
/// erased text — greped for byte for byte — while `serve`, a follower and
/// a writer go on with the database open, losing nothing; `kill -9` during
/// an erase or a purge leaves a log that verifies.
@Suite(.serialized) struct PurgeTests {
  /// A log with filler around two sentinels: one item's text and its edit,
  /// and a text past a page (LMDB keeps it in overflow pages).
  private func logWithSentinels(_ s: Sandbox, _ sentinel: String) -> String {
    let before = (0..<300).map { "filler \($0) before" }.joined(separator: "\n")
    #expect(s.run(["append", "--lines"], stdin: Data(before.utf8)).code == 0)
    let secret = s.append("\(sentinel)-ONE", sender: "eve")
    #expect(s.run("edit", secret, "\(sentinel)-TWO " + String(repeating: "\(sentinel)-BIG ", count: 400)).code == 0)
    let after = (0..<300).map { "filler \($0) after" }.joined(separator: "\n")
    #expect(s.run(["append", "--lines"], stdin: Data(after.utf8)).code == 0)
    return secret
  }

  @Test func noFileHoldsTheTextAfterPurgeWhileOthersWork() throws {
    let s = Sandbox()
    let sentinel = "SENTINEL-" + UUID().uuidString
    let secret = logWithSentinels(s, sentinel)
    let served = try ServedLog.running(s)
    defer { _ = served.stop() }
    let follower = s.start(["log", "--follow", "--from", "1"])
    defer { if follower.process.isRunning { kill(follower.process.processIdentifier, SIGKILL) } }
    #expect(follower.waitForOutput("filler 299 after"))

    var r = s.run("erase", secret)
    #expect(r.code == 0 && r.stdout.hasPrefix("erased 1 item (2 events) at seq"), "\(r)")
    // Erased, but LMDB's copy-on-write left the old pages: the test can fail.
    #expect(!filesHolding(sentinel, in: s.db).isEmpty, "the erase left no old page to purge")

    // A writer appends all the while (each append a process of its own).
    let writer = s.start(
      [
        "-c", "for i in $(seq 1 400); do \"$0\" append \"writer $i\" >/dev/null || exit 1; done; echo done",
        Sandbox.binary,
      ],
      runner: "/bin/sh")
    #expect(follower.waitForOutput("writer 5"))
    r = s.run("purge")
    #expect(r.code == 0 && r.stdout.hasPrefix("purged: ") && r.stdout.hasSuffix(" bytes scrubbed\n"), "\(r)")
    #expect(filesHolding(sentinel, in: s.db).isEmpty, "\(filesHolding(sentinel, in: s.db)) still hold it")
    // The writer was at work before the purge and is still (400 appends).
    #expect(writer.process.isRunning, "the writer ended before the purge did")
    #expect(writer.waitForOutput("done"))
    let written = writer.finish()
    #expect(written.code == 0, "\(written)")
    #expect(follower.waitForOutput("writer 400"))
    // Whatever they wrote during the purge is there, and the log verifies.
    let reply = served.request("GET", "/api/items")
    #expect(reply.status == 200 && reply.body.contains(#""count":1000"#), "\(reply)")
    r = s.run("verify")
    #expect(r.code == 0 && r.stdout.hasPrefix("ok"), "\(r)")
    // Again: nothing left to find, and the writer's pages stay clean.
    r = s.run("purge", "--json")
    #expect(r.code == 0 && r.stdout.hasPrefix(#"{"purged":"#), "\(r)")
    #expect(filesHolding(sentinel, in: s.db).isEmpty, "\(filesHolding(sentinel, in: s.db)) still hold it")
    #expect(filesHolding(String(sentinel.suffix(20)), in: s.db).isEmpty)
    #expect(s.run("verify").code == 0)
  }

  /// A log of 20 000 events with a few of mallory's among them — two long
  /// ones side by side (shrinking both leaves their old bytes in their
  /// page's unused middle) and short ones far apart:
  /// after `erase --sender` and `purge`, no file holds a byte of them, free
  /// pages included, and purge scrubbed about what the erase touched, not
  /// a database's worth (it rewrites the pages at the erase's marks).
  @Test func purgeOfALargeLogScrubsWhatTheEraseTouchedOnly() throws {
    let s = Sandbox()
    let sentinel = "SENTINEL-" + UUID().uuidString
    let long = String(repeating: "\(sentinel) ", count: 1800 / (sentinel.count + 1))
    let lines = (0..<20_000).map { i -> String in
      switch i {
      case 9_000, 9_001: return #"{"op":"append","text":"\#(i) \#(long)","sender":"mallory"}"#
      case _ where i % 4_000 == 17: return #"{"op":"append","text":"\#(sentinel)-\#(i)","sender":"mallory"}"#
      default: return #"{"op":"append","text":"line \#(i), of an ordinary length","sender":"stays"}"#
      }
    }.joined(separator: "\n")
    #expect(s.run(["import"], stdin: Data(lines.utf8)).code == 0)
    var r = s.run("erase", "--sender", "mallory")
    #expect(r.code == 0 && r.stdout.hasPrefix("erased 7 items (7 events) at seq"), "\(r)")
    #expect(!filesHolding(sentinel, in: s.db).isEmpty, "the erase left no old bytes to purge")

    r = s.run("purge", "--json")
    #expect(r.code == 0, "\(r)")
    #expect(filesHolding(sentinel, in: s.db).isEmpty, "\(filesHolding(sentinel, in: s.db)) still hold it")
    #expect(filesHolding(String(sentinel.suffix(16)), in: s.db).isEmpty)
    // A rewrite of every page would free (and scrub) about the whole file.
    let scrubbed = UInt64(r.stdout.split(separator: ":").last?.dropLast(2) ?? "") ?? .max
    let size = (try? FileManager.default.attributesOfItem(atPath: s.db + "/data.mdb")[.size] as? UInt64) ?? 0
    #expect(scrubbed < size / 4, "purge scrubbed \(scrubbed) bytes of a file of \(size)")
    #expect(s.run("verify").code == 0)
    #expect(s.run("list").stdout.split(separator: "\n").count == 19_993)
  }

  /// A reader whose snapshot is older than the erase (another process,
  /// here Python's LMDB) still sees the pages the erase freed: purge
  /// zeroes none of them — the reader reads the same bytes after — and
  /// says what held it; once the reader is gone, a purge finishes.
  /// `erase --purge` there reports the erase it made (stdout, text and
  /// JSON) before its purge's failure (exit 1), whose hint says the erase
  /// stands.
  @Test func purgeLeavesThePagesAnOlderSnapshotReads() throws {
    let s = Sandbox()
    let sentinel = "SENTINEL-" + UUID().uuidString
    let secret = logWithSentinels(s, sentinel)
    let go = s.dir + "/go"
    let script = """
      import hashlib, lmdb, os, sys, time
      env = lmdb.open(sys.argv[1], readonly=True, max_dbs=16)
      events = env.open_db(b"events", create=False)
      with env.begin(db=events) as txn:
          def digest():
              h = hashlib.sha256()
              for key, value in txn.cursor():
                  h.update(key + value)
              return h.hexdigest()
          first = digest()
          print("holding", flush=True)
          deadline = time.time() + 60
          while not os.path.exists(sys.argv[2]) and time.time() < deadline:
              time.sleep(0.01)
          print("same" if digest() == first else "changed", flush=True)
      """
    let reader = s.start(["-c", script, s.db, go], runner: "/usr/bin/python3")
    defer { if reader.process.isRunning { kill(reader.process.processIdentifier, SIGKILL) } }
    #expect(reader.waitForOutput("holding"))
    #expect(s.run("erase", secret).code == 0)
    var r = s.run("purge")
    #expect(r.code != 0 && r.stderr.contains("read kept holding old pages"), "\(r)")
    #expect(r.stderr.contains("hint: run 'msglog purge' once that read has ended"), "\(r)")
    let second = s.append("\(sentinel)-SECOND")
    let third = s.append("\(sentinel)-THIRD")
    r = s.run("erase", "--purge", second)
    let seq = s.run("log", "--json").lines.count
    #expect(r.code == 1 && r.stdout == "erased 1 item (1 event) at seq \(seq)\n", "\(r)")
    #expect(r.stderr.hasPrefix("msglog: cannot purge ") && r.stderr.contains("read kept holding old pages"), "\(r)")
    #expect(
      r.stderr.contains("hint: the erase was made (seq \(seq)); run 'msglog purge' once that read has ended"), "\(r)")
    r = s.run("--json", "erase", "--purge", third)
    #expect(r.code == 1 && r.stdout == #"{"erased":["\#(third)"],"events":1,"seq":\#(seq + 1)}"# + "\n", "\(r)")
    #expect(s.run("erase", second).stderr.contains("erased already"))
    _ = FileManager.default.createFile(atPath: go, contents: nil)
    #expect(reader.waitForOutput("same"))
    let read = reader.finish()
    #expect(read.code == 0 && read.stdout.hasSuffix("same\n"), "\(read)")
    #expect(s.run("verify").code == 0)
    r = s.run("purge")
    #expect(r.code == 0, "\(r)")
    #expect(filesHolding(sentinel, in: s.db).isEmpty, "\(filesHolding(sentinel, in: s.db)) still hold it")
  }

  /// Written, erased and written after through `serve`, one long process
  /// (LMDB reuses its page buffers uncleared: they held the text's page):
  /// purge after serve stopped leaves no file holding the text.
  @Test func purgeAfterAnEraseThroughServe() throws {
    let s = Sandbox()
    let sentinel = "SENTINEL-" + UUID().uuidString
    let filler = (0..<2_000).map { #"{"op":"append","text":"line \#($0), of an ordinary length"}"# }
    #expect(s.run(["import"], stdin: Data(filler.joined(separator: "\n").utf8)).code == 0)
    let served = try ServedLog.running(s)
    func append(_ text: String, sender: String = "ann") {
      let reply = served.request("POST", "/api/append", #"{"text":"\#(text)","sender":"\#(sender)"}"#)
      #expect(reply.status == 200, "\(reply)")
    }
    for i in 0..<30 { append("served \(i)") }
    append("\(sentinel) said by eve", sender: "eve")
    for i in 0..<30 { append("served again \(i)") }
    append("\(sentinel) said by eve again", sender: "eve")
    let reply = served.request("POST", "/api/erase", #"{"sender":"eve"}"#)
    #expect(reply.status == 200 && reply.body.hasPrefix(#"{"erased":["#), "\(reply)")
    for i in 0..<200 { append("after \(i)") }
    #expect(served.stop().code == 0)
    let r = s.run("purge")
    #expect(r.code == 0, "\(r)")
    #expect(filesHolding(sentinel, in: s.db).isEmpty, "\(filesHolding(sentinel, in: s.db)) still hold it")
    #expect(filesHolding(String(sentinel.suffix(12)), in: s.db).isEmpty)
    #expect(s.run("verify").code == 0)
  }

  /// A purge while `serve` runs stays done after serve writes again: its
  /// page buffers, filled before the purge, held the erased texts' pages,
  /// and LMDB reuses them uncleared for the pages it writes next (an
  /// attacker found 18 of 40 erased texts back in the file after five
  /// appends). Serve's next write finds the purge newer than its buffers
  /// and opens the database afresh, waiting for its reads in flight — a
  /// reader keeps asking meanwhile.
  @Test func writesThroughServeAfterAPurgeBringNothingBack() throws {
    let s = Sandbox()
    s.append("seed")
    let sentinel = "SENTINEL-" + UUID().uuidString
    let served = try ServedLog.running(s)
    defer { _ = served.stop() }
    func append(_ text: String) {
      let reply = served.request("POST", "/api/append", #"{"text":"\#(text)"}"#)
      #expect(reply.status == 200, "\(reply)")
    }
    for i in 0..<40 { append("\(sentinel)-\(i) padding padding padding padding") }
    let listed = try JSONSerialization.jsonObject(with: Data(s.run("--json", "list").stdout.utf8)) as? [String: Any]
    let ids = (listed?["items"] as? [[String: Any]] ?? []).compactMap { $0["id"] as? String }
    #expect(ids.count == 41)
    var r = s.run(["erase"] + ids.dropFirst())
    #expect(r.code == 0, "\(r)")
    r = s.run("purge")
    #expect(r.code == 0, "\(r)")
    #expect(filesHolding(sentinel, in: s.db).isEmpty)
    let reader = Process()
    reader.executableURL = URL(fileURLWithPath: "/bin/sh")
    reader.arguments = ["-c", "while :; do curl -s -o /dev/null 'http://127.0.0.1:\(served.port)/api/items'; done"]
    try reader.run()
    for i in 0..<20 { append("later \(i)") }
    reader.terminate()
    reader.waitUntilExit()
    #expect(filesHolding(sentinel, in: s.db).isEmpty, "\(filesHolding(sentinel, in: s.db)) hold an erased text again")
    #expect(s.run("list").lines.count == 21)
    #expect(s.run("verify").code == 0)
  }

  /// `erase --purge` does both; `kill -9` in the middle of a purge (or an
  /// erase) leaves a log that verifies, and a purge run again finishes.
  @Test func aKilledEraseOrPurgeLeavesALogThatVerifies() throws {
    let s = Sandbox()
    let sentinel = "SENTINEL-" + UUID().uuidString
    // Enough to take a while to rewrite.
    let text = String(repeating: "p", count: 200_000)
    let lines = (0..<200).map { #"{"op":"append","text":"\#($0) \#(text)"}"# }.joined(separator: "\n")
    #expect(s.run(["import"], stdin: Data(lines.utf8)).code == 0)
    let secret = logWithSentinels(s, sentinel)
    let other = s.append("\(sentinel)-OTHER")

    // An erase killed at once: done whole or not at all.
    let erase = s.start(["erase", other])
    kill(erase.process.processIdentifier, SIGKILL)
    _ = erase.finish()
    var r = s.run("verify")
    #expect(r.code == 0, "\(r)")
    let erased = s.run("log", "--json").stdout.contains(#""op":"erase","id":"\#(other)""#)
    #expect(s.export().contains("\(sentinel)-OTHER") == !erased)

    #expect(s.run("erase", secret).code == 0)
    let purge = s.start(["purge"])
    let data = s.db + "/data.mdb"
    var info = stat()
    stat(data, &info)
    let before = info.st_mtim
    // Killed once its first commit touched the data file.
    while purge.process.isRunning {
      stat(data, &info)
      if info.st_mtim.tv_sec != before.tv_sec || info.st_mtim.tv_nsec != before.tv_nsec { break }
      usleep(200)
    }
    kill(purge.process.processIdentifier, SIGKILL)
    _ = purge.finish()
    r = s.run("verify")
    #expect(r.code == 0, "\(r)")
    r = s.run("erase", other, "--purge")
    #expect(r.code == 0 && r.stdout.contains("purged: "), "\(r)")
    #expect(filesHolding(sentinel, in: s.db).isEmpty, "\(filesHolding(sentinel, in: s.db)) still hold it")
    #expect(s.run("verify").code == 0)
  }
}
