#if canImport(Glibc)
  import Glibc
#endif

/// A one-line progress bar on stderr for long imports: events done, rate and
/// time left. Shown only when stderr is a terminal and the job is large, and
/// redrawn at most ten times a second.
struct Progress {
  let label: String
  let total: Int
  let stderr: BufferedOutput
  let enabled: Bool
  let start = ContinuousClock.now
  var lastDraw = ContinuousClock.now - .seconds(1)

  init(_ label: String, total: Int, stderr: BufferedOutput, minimum: Int = 20_000) {
    self.label = label
    self.total = total
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
      "\r\(label) [\(bar)] \(done)/\(total) events, \(Int(rate)) events/s, \(Int(left.rounded(.up))) s left \u{1B}[K")
    try? stderr.flush()
  }

  /// Clears the line, so that the result prints on a clean one.
  func finish() {
    guard enabled else { return }
    try? stderr.write("\r\u{1B}[K")
    try? stderr.flush()
  }
}
