import Msglog

#if canImport(Glibc)
  import Glibc
#endif

/// A one-line progress bar on stderr for long jobs (imports, verify): steps
/// done, rate and time left. Shown only when stderr is a terminal and the
/// job is large, and redrawn at most ten times a second.
struct Progress {
  let label: String
  let total: Int
  /// What is counted, plural (`events`, `ids`).
  let unit: String
  let stderr: BufferedOutput
  let enabled: Bool
  let start = ContinuousClock.now
  var lastDraw = ContinuousClock.now - .seconds(1)

  init(_ label: String, total: Int, unit: String = "events", stderr: BufferedOutput, minimum: Int = 20_000) {
    self.label = label
    self.total = total
    self.unit = unit
    self.stderr = stderr
    enabled = total >= minimum && isatty(2) == 1
  }

  mutating func update(_ done: Int) {
    guard enabled else { return }
    let now = ContinuousClock.now
    guard now - lastDraw >= .milliseconds(100) || done == total else { return }
    lastDraw = now
    let elapsed = Double((now - start).components.attoseconds) / 1e18 + Double((now - start).components.seconds)
    let rate = elapsed > 0 ? Double(done) / elapsed : 0
    let left = rate > 0 ? Double(total - done) / rate : 0
    let width = 24
    let filled = total > 0 ? width * done / total : width
    let bar = String(repeating: "#", count: filled) + String(repeating: "-", count: width - filled)
    try? stderr.write(
      "\r\(label) [\(bar)] \(done)/\(total) \(unit), \(Int(rate)) \(unit)/s, \(Int(left.rounded(.up))) s left \u{1B}[K")
    try? stderr.flush()
  }

  /// Clears the line, so that the result prints on a clean one.
  func finish() {
    guard enabled else { return }
    try? stderr.write("\r\u{1B}[K")
    try? stderr.flush()
  }
}

/// The progress of a `verify` or `repair`: one bar per stage, each
/// replacing the last on the same line.
struct VerifyProgressBar {
  let stderr: BufferedOutput
  private var bar: Progress? = nil
  private var stage: VerifyProgress.Stage? = nil
  /// The stages seen, for labels that tell the second check from the first.
  private var checks = 0

  init(stderr: BufferedOutput) { self.stderr = stderr }

  mutating func update(_ progress: VerifyProgress) {
    if progress.stage != stage || progress.total != bar?.total {
      if progress.stage != stage, progress.stage == .events { checks += 1 }
      stage = progress.stage
      bar?.finish()
      let label: String
      switch progress.stage {
      case .events: label = checks > 1 ? "checking the rebuild" : "verifying"
      case .ids: label = checks > 1 ? "checking the rebuild" : "verifying"
      case .rebuild: label = "rebuilding"
      }
      bar = Progress(label, total: progress.total, unit: progress.stage == .ids ? "ids" : "events", stderr: stderr)
    }
    bar?.update(progress.done)
  }

  func finish() { bar?.finish() }
}
