import Foundation
import MsglogTestSupport
import Testing

/// Several `msglog` processes writing one database at once, with readers
/// alongside: LMDB's single-writer lock must keep seqs contiguous, and every
/// write that printed success must be in the log exactly as printed.
///
/// `MSGLOG_STRESS=1` runs the long variant (thousands of commands).
@Suite struct ConcurrencyTests {
  struct Acknowledged: Sendable {
    var seq: Int
    var op: String
    var id: String
  }

  final class Collector: @unchecked Sendable {
    private let lock = NSLock()
    private(set) var acknowledged: [Acknowledged] = []
    private(set) var unexpected: [String] = []
    private(set) var refusals = 0

    func record(_ r: Run, op: String, args: [String]) {
      lock.lock()
      defer { lock.unlock() }
      switch r.code {
      case 0 where op == "read":
        break
      case 0:
        // A move onto itself: with --json, serve's document (issue 26 item 6).
        if r.stdout.isEmpty || r.stdout == "{\"moved\":false}\n" { break }
        guard let object = try? JSONSerialization.jsonObject(with: Data(r.stdout.utf8)) as? [String: Any],
          let seq = object["seq"] as? Int, let id = object["id"] as? String
        else {
          unexpected.append("\(args): unparsable success: \(r)")
          return
        }
        acknowledged.append(Acknowledged(seq: seq, op: op, id: id))
      case 1 where r.stderr.hasPrefix("msglog: ") && op != "append":
        refusals += 1  // a stale index or an id someone else removed
      default:
        unexpected.append("\(args): \(r)")
      }
    }
  }

  /// Several first writes race to create the database: each builds its own
  /// and renames it into place; the losers write into the winner's.
  @Test func firstWritesRaceToCreateTheDatabase() throws {
    let s = Sandbox()
    let children = (0..<6).map { s.start(["append", "racer \($0)"]) }
    let runs = children.map { $0.finish() }
    for r in runs { #expect(r.code == 0, "\(r)") }
    #expect(s.run("list").lines.count == 6)
    #expect(s.run("verify").code == 0)
    let leftovers = try FileManager.default.contentsOfDirectory(atPath: s.dir).filter { $0.contains(".creating-") }
    #expect(leftovers.isEmpty)
  }

  /// First imports of files racing to create the database: the losers'
  /// builds run again in the winner's database, and every line lands. (A
  /// run again with the parser the first run had used up imported
  /// nothing: "imported 0 events", exit 0, 20,000 lines lost.) Three
  /// imports of 20,000 lines, so that builds overlap.
  @Test func firstImportsRaceToCreateTheDatabase() throws {
    let s = Sandbox()
    let lines = (0..<20_000).map { #"{"op":"append","text":"line \#($0)"}"# }.joined(separator: "\n")
    let file = s.dir + "/lines.jsonl"
    try Data(lines.utf8).write(to: URL(fileURLWithPath: file))
    let children = (0..<3).map { _ in s.start(["import", file]) }
    let runs = children.map { $0.finish() }
    for r in runs {
      #expect(r.code == 0 && r.stdout.hasPrefix("imported 20000 events; the head is seq "), "\(r)")
    }
    #expect(s.run("verify").stdout.hasPrefix("ok: 60000 events, 1 stream, 60000 live items"))
  }

  @Test(arguments: Store.allCases) func writersAndReadersAtOnce(_ store: Store) throws {
    let stress = ProcessInfo.processInfo.environment["MSGLOG_STRESS"] != nil
    let commandsPerWriter = stress ? 1000 : 250
    let writers = 4
    let s = Sandbox(store)
    s.append("seed")
    let collector = Collector()
    let readersDone = NSLock()
    nonisolated(unsafe) var stopReaders = false
    nonisolated(unsafe) var finishedWriters = 0

    DispatchQueue.concurrentPerform(iterations: writers + 2) { worker in
      var rng = SystemRandomNumberGenerator()
      if worker >= writers {
        // Readers: list, replay --at, log, until the writers are done.
        var round = 0
        while true {
          readersDone.lock()
          let stop = stopReaders
          readersDone.unlock()
          if stop { break }
          let args: [[String]] = [["list"], ["replay", "--at", "1"], ["log", "--all", "--limit", "50"], ["streams"]]
          let r = s.run(args[round % args.count] + ["--json"])
          collector.record(r, op: "read", args: args[round % args.count])
          round += 1
        }
        return
      }
      let stream = worker % 2 == 0 ? "main" : "side"
      var mine: [String] = []
      for n in 0..<commandsPerWriter {
        let roll = Int.random(in: 0..<10, using: &rng)
        let args: [String]
        let op: String
        switch roll {
        case 0..<4:
          op = "append"
          args = ["append", "w\(worker)-\(n)"]
        case 4..<6:
          op = "insert"
          args = ["insert", String(Int.random(in: 0..<8, using: &rng)), "w\(worker)-\(n)"]
        case 6..<8:
          op = "move"
          args = ["move", String(Int.random(in: 0..<8, using: &rng)), String(Int.random(in: 0..<8, using: &rng))]
        default:
          op = "remove"
          args = ["remove", mine.isEmpty ? "00000000-0000-4000-8000-000000000000" : mine.randomElement(using: &rng)!]
        }
        let r = s.run(args + ["--stream", stream, "--json"])
        collector.record(r, op: op, args: args)
        if r.code == 0, op == "append" || op == "insert",
          let id = (try? JSONSerialization.jsonObject(with: Data(r.stdout.utf8)) as? [String: Any])?["id"] as? String
        {
          mine.append(id)
        }
      }
      // The last writer to finish stops the readers.
      readersDone.lock()
      finishedWriters += 1
      if finishedWriters == writers { stopReaders = true }
      readersDone.unlock()
    }

    #expect(collector.unexpected.isEmpty, "\(collector.unexpected.prefix(5))")
    // Every acknowledged write is in the log, at the seq it printed, with its id.
    let events = s.export().split(separator: "\n").map {
      try! JSONSerialization.jsonObject(with: Data($0.utf8)) as! [String: Any]
    }
    #expect(events.map { $0["seq"] as! Int } == Array(1...events.count), "seqs are not 1…head")
    for ack in collector.acknowledged {
      let event = events[ack.seq - 1]
      #expect(
        event["id"] as? String == ack.id && event["op"] as? String == (ack.op == "append" ? "insert" : ack.op), "\(ack)"
      )
    }
    #expect(events.count == collector.acknowledged.count + 1)  // + the seed
    // An independent model replays the export: it must equal `list` of each stream.
    for stream in ["main", "side"] {
      var model: [String] = []
      for event in events where event["stream"] as? String == stream {
        let id = event["id"] as! String
        switch event["op"] as! String {
        case "insert": model.insert(id, at: event["index"] as! Int)
        case "remove": model.removeAll { $0 == id }
        default:
          let x = model.remove(at: event["from"] as! Int)
          #expect(x == id)
          model.insert(x, at: event["to"] as! Int)
        }
      }
      let list =
        try JSONSerialization.jsonObject(with: Data(s.run(["list", "--json", "--stream", stream]).stdout.utf8))
        as! [String: Any]
      #expect((list["items"] as! [[String: Any]]).map { $0["id"] as! String } == model, "stream \(stream)")
    }
    let verify = s.run("verify")
    #expect(verify.code == 0, "\(verify)")
    print(
      "concurrency: \(writers) writers, \(writers * commandsPerWriter) commands, \(collector.acknowledged.count) acknowledged, \(collector.refusals) refused"
    )
  }
}
