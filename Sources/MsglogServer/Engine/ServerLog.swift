import Msglog
import Synchronization

#if canImport(Glibc)
  import Glibc
#endif

/// The lines an operator must act on (a limit reached, a resource run
/// out), on stderr: `msglog: warn: …`, each kind at most once a second, so
/// that a flood of refusals cannot flood the log too.
final class ServerLog: Sendable {
  private let last = Mutex<[String: Deadline]>([:])

  func warn(_ kind: String, _ message: String) {
    let now = Deadline.now()
    let due = last.withLock { last in
      if let previous = last[kind], now.nanoseconds - previous.nanoseconds < 1_000_000_000 { return false }
      last[kind] = now
      return true
    }
    guard due else { return }
    let line = Array("msglog: warn: \(message)\n".utf8)
    _ = line.withUnsafeBytes { write(2, $0.baseAddress, $0.count) }
  }
}
