import Foundation
import Msglog

/// Where users wait, as whole processes on one trace (issue 10's figures):
/// `--json list` against text `list`, text `list` against a full text
/// `replay`, the replay rate, and `import` against a Python `lmdb` script
/// that writes the same records and an id index without parsing anything.
/// Each pair alternates run by run and reports medians, so the machine's
/// drift hits both sides alike.
struct UserBench {
  var trace: Trace
  var directory: String
  var msglog: String
  var root: String
  var runs = 31

  struct Results {
    var list: Duration
    var jsonList: Duration
    var replay: Duration
    var jsonReplay: Duration
    var importTime: Duration
    var baselineImport: Duration
    var events: Int
  }

  func run() throws -> Results {
    try? FileManager.default.removeItem(atPath: directory)
    try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
    let db = directory + "/trace.lmdb"
    let log = try EventLog(db)
    _ = try log.perform(trace.requests)
    let export = directory + "/export.jsonl"
    try exportLog(db: db, to: export)

    let doc = ["--db", db, "--stream", "doc"]
    let (list, jsonList) = try alternatingProcesses(runs, (msglog, doc + ["list"]), (msglog, doc + ["--json", "list"]))
    let (replay, jsonReplay) = try alternatingProcesses(
      runs, (msglog, doc + ["replay"]), (msglog, doc + ["--json", "replay"]))

    // Import: fresh databases each time; three of each, alternating.
    var imports: [Duration] = [], baselines: [Duration] = []
    for i in 0..<3 {
      let target = directory + "/import-\(i).lmdb"
      let run = try runProcess(msglog, ["--db", target, "import", export])
      guard run.status == 0 else { throw BenchError("import failed") }
      imports.append(run.time)
      let output = directory + "/baseline-\(i).txt"
      let python = try runShell(
        "/usr/bin/python3 '\(root)/scripts/lmdb-import-baseline.py' '\(db)' '\(directory)/baseline-\(i).lmdb' > '\(output)'")
      guard python == 0, let text = try? String(contentsOfFile: output, encoding: .utf8),
        let seconds = Double(text.split(separator: " ").first ?? "")
      else { throw BenchError("the Python lmdb baseline failed (python3-lmdb installed?)") }
      baselines.append(.seconds(seconds))
      try? FileManager.default.removeItem(atPath: target)
      try? FileManager.default.removeItem(atPath: directory + "/baseline-\(i).lmdb")
    }
    return Results(
      list: list, jsonList: jsonList, replay: replay, jsonReplay: jsonReplay, importTime: median(imports),
      baselineImport: median(baselines), events: trace.requests.count)
  }

  private func exportLog(db: String, to path: String) throws {
    guard try runShell("'\(msglog)' --db '\(db)' export > '\(path)'") == 0 else { throw BenchError("export failed") }
  }
}

func median(_ times: [Duration]) -> Duration { times.sorted()[times.count / 2] }

/// Runs a shell command line; its exit status.
func runShell(_ command: String) throws -> Int32 {
  try runProcess("/bin/sh", ["-c", command]).status
}

/// Medians of `runs` runs of each command, alternating A, B, A, B…, so
/// that the machine's drift hits both alike.
func alternatingProcesses(_ runs: Int, _ a: (String, [String]), _ b: (String, [String])) throws -> (Duration, Duration) {
  var ta: [Duration] = [], tb: [Duration] = []
  for _ in 0..<runs {
    let ra = try runProcess(a.0, a.1), rb = try runProcess(b.0, b.1)
    guard ra.status == 0, rb.status == 0 else { throw BenchError("\(a.0) or \(b.0) failed") }
    ta.append(ra.time)
    tb.append(rb.time)
  }
  return (median(ta), median(tb))
}
