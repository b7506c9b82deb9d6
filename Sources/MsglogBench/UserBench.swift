import Foundation
import Msglog

/// Where users wait, as whole processes on one trace (issue 20's figures),
/// each with its output going to a file as a user's `> file` would:
/// `--json list` against text `list`, text `list` against a full text
/// `replay`, the replay rate, `--json replay` against a plain Python script
/// that folds the log into a list (`scripts/replay-list-baseline.py`, its
/// output checked equal first), and `import` into an empty database against
/// a Python `lmdb` script that writes the same records and an id index
/// without parsing anything. Each pair alternates run by run and reports
/// the best of `runs` of each, so the machine's drift hits both sides alike
/// and a run slowed by another process does not count.
struct UserBench {
  var trace: Trace
  var directory: String
  var msglog: String
  var root: String
  var runs = 7
  /// Runs of the Python list script's pair.
  var pythonListRuns = 5
  /// Runs of the import pair: a short trace's import (about 30 ms) was
  /// seen to take 34–43 ms in all five runs of a bench while it took 28 ms
  /// in most of 60 runs in turns with another build; more runs make such
  /// a run rarer (the Python writer times itself without its start, so
  /// it is not slowed alike).
  var importRuns = 11

  struct Results {
    var list: Duration
    var jsonList: Duration
    var replay: Duration
    var jsonReplay: Duration
    var pythonReplay: Duration
    var importTime: Duration
    var baselineImport: Duration
    var events: Int
  }

  func run() throws -> Results {
    try? FileManager.default.removeItem(atPath: directory)
    try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
    let db = directory + "/trace.lmdb"
    do {
      let log = try EventLog(db)
      _ = try log.perform(trace.requests)
    }
    let export = directory + "/export.jsonl"
    try exportLog(db: db, to: export)

    let out = directory + "/output"
    let doc = ["--db", db, "--stream", "doc"]
    let (list, jsonList) = try alternatingBest(
      runs, (msglog, doc + ["list"]), (msglog, doc + ["--json", "list"]), output: out)
    let (replay, _) = try alternatingBest(
      runs, (msglog, doc + ["replay"]), (msglog, doc + ["--json", "replay"]), output: out)

    // The Python list script prints what `--json replay` prints.
    let python = ("/usr/bin/python3", ["\(root)/scripts/replay-list-baseline.py", db, "doc"])
    _ = try runProcess(msglog, doc + ["--json", "replay"], output: out + ".msglog")
    _ = try runProcess(python.0, python.1, output: out + ".python")
    guard let ours = FileManager.default.contents(atPath: out + ".msglog"), !ours.isEmpty,
      ours == FileManager.default.contents(atPath: out + ".python")
    else { throw BenchError("scripts/replay-list-baseline.py does not print what --json replay prints") }
    let (jsonReplay, pythonReplay) = try alternatingBest(
      pythonListRuns, (msglog, doc + ["--json", "replay"]), python, output: out)

    // Import into an empty database (a fresh one each time), alternating with the Python writer.
    var imports: [Duration] = [], baselines: [Duration] = []
    for i in 0..<importRuns {
      let target = directory + "/import-\(i).lmdb"
      let run = try runProcess(msglog, ["--db", target, "import", export], output: out)
      guard run.status == 0 else { throw BenchError("import failed") }
      imports.append(run.time)
      let output = directory + "/baseline-\(i).txt"
      let python = try runShell(
        "/usr/bin/python3 '\(root)/scripts/lmdb-import-baseline.py' '\(db)' '\(directory)/baseline-\(i).lmdb' > '\(output)'"
      )
      guard python == 0, let text = try? String(contentsOfFile: output, encoding: .utf8),
        let seconds = Double(text.split(separator: " ").first ?? "")
      else { throw BenchError("the Python lmdb baseline failed (python3-lmdb installed?)") }
      baselines.append(.seconds(seconds))
      try? FileManager.default.removeItem(atPath: target)
      try? FileManager.default.removeItem(atPath: directory + "/baseline-\(i).lmdb")
    }
    return Results(
      list: list, jsonList: jsonList, replay: replay, jsonReplay: jsonReplay, pythonReplay: pythonReplay,
      importTime: imports.min()!, baselineImport: baselines.min()!, events: trace.requests.count)
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

/// The best of `runs` runs of each command, alternating A, B, A, B…, each
/// with its stdout going to `output`, so that the machine's drift hits both alike.
func alternatingBest(_ runs: Int, _ a: (String, [String]), _ b: (String, [String]), output: String) throws -> (
  Duration, Duration
) {
  var ta: [Duration] = [], tb: [Duration] = []
  for _ in 0..<runs {
    let ra = try runProcess(a.0, a.1, output: output), rb = try runProcess(b.0, b.1, output: output)
    guard ra.status == 0, rb.status == 0 else { throw BenchError("\(a.0) or \(b.0) failed") }
    ta.append(ra.time)
    tb.append(rb.time)
  }
  return (ta.min()!, tb.min()!)
}

/// Medians of `runs` runs of each command, alternating A, B, A, B…, so
/// that the machine's drift hits both alike.
func alternatingProcesses(_ runs: Int, _ a: (String, [String]), _ b: (String, [String])) throws -> (Duration, Duration)
{
  var ta: [Duration] = [], tb: [Duration] = []
  for _ in 0..<runs {
    let ra = try runProcess(a.0, a.1), rb = try runProcess(b.0, b.1)
    guard ra.status == 0, rb.status == 0 else { throw BenchError("\(a.0) or \(b.0) failed") }
    ta.append(ra.time)
    tb.append(rb.time)
  }
  return (median(ta), median(tb))
}
