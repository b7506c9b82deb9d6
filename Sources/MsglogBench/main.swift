import Foundation
import MsglogCore
import MsglogLMDB

/// msglog-bench: figures for README's Performance section, each as a ratio
/// against a baseline measured in the same run (see scripts/bench).
///
///     msglog-bench --trace ../shared/traces/automerge-paper.json.gz [--trace …] [--runs N]
let arguments = Array(CommandLine.arguments.dropFirst())
var traces: [String] = []
var runs = 3
var i = 0
while i < arguments.count {
  switch arguments[i] {
  case "--trace": traces.append(arguments[i + 1]); i += 2
  case "--runs": runs = Int(arguments[i + 1])!; i += 2
  default:
    FileHandle.standardError.write(Data("msglog-bench: unknown argument \(arguments[i])\n".utf8))
    exit(64)
  }
}

let scratch = NSTemporaryDirectory() + "msglog-bench-" + UUID().uuidString
try FileManager.default.createDirectory(atPath: scratch, withIntermediateDirectories: true)
defer { try? FileManager.default.removeItem(atPath: scratch) }

var table = Table()
for path in traces {
  let trace = try Trace.load(path: path, stream: "doc")
  let events = trace.requests.count
  FileHandle.standardError.write(Data("bench: \(trace.name): \(events) events\n".utf8))
  let results = try TraceBench(trace: trace, directory: scratch + "/" + trace.name, runs: runs).run()
  let replayRate = Double(events) / results.replay.seconds
  table.add("\(trace.name): import \(events) events", results.importTime.pretty, "—", "—", "")
  table.add(
    "\(trace.name): full replay vs Array baseline", results.replay.pretty, results.arrayBaseline.pretty,
    ratio(results.arrayBaseline.seconds, results.replay.seconds) + " faster", "≥ 50×")
  table.add(
    "\(trace.name): full replay rate", String(format: "%.1f M events/s", replayRate / 1e6), "—", "—", "≥ 10 M/s")
  table.add(
    "\(trace.name): full replay vs raw LMDB cursor scan", results.replay.pretty, results.rawScan.pretty,
    ratio(results.replay.seconds, results.rawScan.seconds) + " slower", "report")
  table.add(
    "\(trace.name): replay --at midpoint vs full replay", results.replayMid.pretty, results.replay.pretty,
    ratio(results.replayMid.seconds, results.replay.seconds), "")
}
print(table.render())
