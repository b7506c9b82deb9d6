import Msglog
import Synchronization

/// The lines an operator must act on (a limit reached, a resource run
/// out, the store unreachable, the disk full), on stderr among the request
/// log's lines: `msglog: warn: …` or `msglog: error: …` (an object with
/// `level` in JSON), each kind at most once a second, so that a flood of
/// refusals cannot flood the log too.
final class ServerLog: Sendable {
  private let last = Mutex<[String: Deadline]>([:])
  let requests: RequestLog

  init(requests: RequestLog = RequestLog(format: .text)) { self.requests = requests }

  /// Whether it was written (not within a second of the last of its kind).
  @discardableResult
  func warn(_ kind: String, _ message: String, at now: Deadline = .now()) -> Bool {
    notice("warn", kind, message, at: now)
  }

  func error(_ kind: String, _ message: String) { notice("error", kind, message, at: .now()) }

  @discardableResult
  private func notice(_ level: String, _ kind: String, _ message: String, at now: Deadline) -> Bool {
    let due = last.withLock { last in
      // `now` was taken before the lock: another thread may have recorded a later one.
      if let previous = last[kind], now.nanoseconds(since: previous) < 1_000_000_000 { return false }
      last[kind] = now
      return true
    }
    guard due else { return false }
    requests.notice(level, message)
    return true
  }
}
