import Foundation

/// Keeps results alive so the optimiser cannot drop the work that made them.
nonisolated(unsafe) var blackHole: Int = 0

@inline(never)
func consume(_ value: Int) { blackHole &+= value }

/// The best (lowest) wall time of `runs` runs: on a shared, noisy machine the
/// minimum is the most repeatable estimate of what the work itself costs.
func best(of runs: Int, _ body: () throws -> Void) rethrows -> Duration {
  var fastest = Duration.seconds(1_000_000)
  for _ in 0..<runs {
    let start = ContinuousClock.now
    try body()
    fastest = min(fastest, ContinuousClock.now - start)
  }
  return fastest
}

extension Duration {
  var seconds: Double {
    let (s, atto) = components
    return Double(s) + Double(atto) / 1e18
  }

  var pretty: String {
    let s = seconds
    if s >= 1 { return String(format: "%.2f s", s) }
    if s >= 1e-3 { return String(format: "%.1f ms", s * 1e3) }
    return String(format: "%.0f µs", s * 1e6)
  }
}

/// A results table: one row per figure, with the ratio against its baseline.
struct Table {
  var rows: [[String]] = [["figure", "msglog", "baseline", "ratio", "target"]]

  mutating func add(_ figure: String, _ value: String, _ baseline: String, _ ratio: String, _ target: String) {
    rows.append([figure, value, baseline, ratio, target])
  }

  func render() -> String {
    var widths = [Int](repeating: 0, count: 5)
    for row in rows { for (i, cell) in row.enumerated() { widths[i] = max(widths[i], cell.count) } }
    var lines: [String] = []
    for (r, row) in rows.enumerated() {
      lines.append(
        "| "
          + row.enumerated().map { $1.padding(toLength: widths[$0], withPad: " ", startingAt: 0) }
          .joined(separator: " | ") + " |")
      if r == 0 {
        lines.append("|" + widths.map { String(repeating: "-", count: $0 + 2) }.joined(separator: "|") + "|")
      }
    }
    return lines.joined(separator: "\n")
  }
}

func ratio(_ a: Double, _ b: Double) -> String { String(format: "%.2f×", a / b) }

/// Operations per second with `clients` threads, each running the
/// operation its setup returns, for `seconds`.
func operationsPerSecond(
  clients: Int, seconds: Double, _ setup: @escaping @Sendable (Int) throws -> () throws -> Void
) throws -> Double {
  let counts = SharedPointer<Int>(capacity: clients, initial: 0)
  defer { counts.free() }
  let failure = LockedError()
  let start = ContinuousClock.now
  // A thread per client (concurrentPerform would run about as many at a
  // time as there are cores: two clients, not sixteen, on this machine).
  let finished = DispatchSemaphore(value: 0)
  for client in 0..<clients {
    Thread {
      defer { finished.signal() }
      do {
        let operation = try setup(client)
        while ContinuousClock.now - start < .seconds(seconds) {
          try operation()
          counts.pointer[client] += 1
        }
      } catch { failure.set(error) }
    }.start()
  }
  for _ in 0..<clients { finished.wait() }
  if let error = failure.error { throw error }
  let elapsed = (ContinuousClock.now - start).seconds
  return Double((0..<clients).reduce(0) { $0 + counts.pointer[$1] }) / elapsed
}
