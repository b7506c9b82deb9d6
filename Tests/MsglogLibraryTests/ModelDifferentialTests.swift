import Foundation
import Msglog
import MsglogTestSupport
import MsglogWire
import Synchronization
import Testing

@testable import MsglogCore

/// A seeded random session of commands — appends, inserts, moves, removes,
/// edits, restores, undos and redos, stale writes with and without rebase,
/// refused ones — run through the independent Python model
/// (Fixtures/model.py, driven by Fixtures/differential.py) and through an
/// `EventLog` on LMDB with the model's clock: the same outcome, the same
/// `--json` answer and the same list after every step, the same export
/// lines at the end, and every past list again from `replay(at:)` (through
/// checkpoints taken every few events).
@Suite struct ModelDifferentialTests {
  struct Step: Decodable {
    var step: Int
    var time: String
    var command: Command
    var outcome: String
    var output: String?
    var list: String
  }

  struct Command: Decodable {
    var op: String
    var stream: String
    var id: String?
    var text: String?
    var sender: String?
    var index: Int?
    var from: Int?
    var to: Int?
    var seq: UInt64?
    var expectVersion: UInt64?
    var rebase: Bool?
  }

  struct Export: Decodable { var export: [String] }

  /// The model's script for `seed`.
  static func script(seed: Int, steps: Int) throws -> (steps: [Step], export: [String]) {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: "/usr/bin/python3")
    process.arguments = [fixture("differential.py"), String(seed), String(steps)]
    let pipe = Pipe()
    process.standardOutput = pipe
    try process.run()
    let data = pipe.fileHandleForReading.readDataToEndOfFile()
    process.waitUntilExit()
    #expect(process.terminationStatus == 0)
    let lines = data.split(separator: UInt8(ascii: "\n"))
    let decoder = JSONDecoder()
    let steps = try lines.dropLast().map { try decoder.decode(Step.self, from: Data($0)) }
    let export = try decoder.decode(Export.self, from: Data(lines.last!)).export
    return (steps, export)
  }

  /// Runs one command through the library.
  static func run(_ c: Command, on log: EventLog) throws -> Outcome? {
    let stream = StreamName(c.stream)
    let rebase = c.rebase ?? false
    switch c.op {
    case "append":
      return try log.append(
        c.text!, sender: c.sender, id: ItemID(canonical: c.id!), to: stream, expectVersion: c.expectVersion)
    case "insert":
      return try log.insert(
        c.text!, at: c.index!, id: ItemID(canonical: c.id!), into: stream, expectVersion: c.expectVersion,
        rebase: rebase)
    case "move":
      return try log.move(from: c.from!, to: c.to!, in: stream, expectVersion: c.expectVersion, rebase: rebase)
    case "remove":
      return try log.remove(.id(ItemID(canonical: c.id!)!), from: stream, expectVersion: c.expectVersion, rebase: rebase)
    case "edit":
      return try log.edit(
        .id(ItemID(canonical: c.id!)!), text: c.text!, sender: c.sender, in: stream, expectVersion: c.expectVersion,
        rebase: rebase)
    case "restore":
      return try log.restore(.id(ItemID(canonical: c.id!)!), at: c.index, in: stream, expectVersion: c.expectVersion)
    case "undo":
      return try log.undo(c.seq, in: stream, expectVersion: c.expectVersion)
    default:
      fatalError("unknown op \(c.op)")
    }
  }

  static func outcomeName(_ error: any Error) -> String {
    guard let error = error as? MsglogError else { return "\(error)" }
    switch error.category {
    case .invalidInput: return "usage"
    case .conflict: return "conflict"
    case .refused, .notFound: return "refused"
    default: return "\(error)"
    }
  }

  @Test(arguments: [1, 2, 3, 4])
  func libraryAgreesWithTheModel(seed: Int) throws {
    let (steps, export) = try Self.script(seed: seed, steps: 300)
    let dir = TemporaryDirectory()
    let now = Mutex(Timestamp(milliseconds: 0))
    let log = try EventLog(
      dir.db, configuration: EventLog.Configuration(clock: { now.withLock { $0 } }, checkpointInterval: 3))
    for step in steps {
      now.withLock { $0 = Timestamp(rfc3339: step.time)! }
      let result = Result { try Self.run(step.command, on: log) }
      let context = "seed \(seed) step \(step.step): \(step.command)"
      switch result {
      case .success(let outcome?):
        var json = JSONWriter()
        json.outcome(outcome)
        #expect(step.outcome == "ok" && json.text == step.output, "\(context): \(json.text) \(step.output ?? "-")")
      case .success(nil):
        #expect(step.outcome == "noop", "\(context): msglog changed nothing, the model \(step.outcome)")
      case .failure(let error):
        #expect(step.outcome == Self.outcomeName(error), "\(context): msglog: \(error)")
      }
      var json = JSONWriter()
      let stream = StreamName(step.command.stream)
      do {
        json.snapshot(try log.items(of: stream))
      } catch MsglogError.noDatabase {
        // Refused writes before the first that succeeds create nothing.
        json.snapshot(StreamContents(stream: stream, seq: 0, version: 0, items: []))
      }
      #expect(json.text == step.list, "\(context)\n  msglog: \(json.text)\n  model:  \(step.list)")
      if json.text != step.list { return }
    }
    var lines: [String] = []
    try log.export { lines.append($0.jsonLine) }
    #expect(lines == export, "seed \(seed): the export lines differ")
    // Every past list again, from checkpoints and the events after them.
    for step in steps {
      let expected = step.list
      let seq = try #require(UInt64(expected.split(separator: ",")[1].dropFirst(6)))
      var json = JSONWriter()
      json.snapshot(try log.replay(StreamName(step.command.stream), at: seq))
      #expect(json.text == expected, "seed \(seed): replay at \(seq)")
    }
    #expect(try log.verify().problems == [])
  }
}
