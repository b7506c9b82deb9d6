import Foundation
import MsglogTestSupport
import Testing

#if canImport(Glibc)
  import Glibc
#endif

/// `msglog serve` on a free port of 127.0.0.1, run as a user runs it, for
/// tests of what a long-running process does with its store: requests with
/// curl, and everything it printed when it is stopped.
final class ServedLog {
  let child: Sandbox.Child
  /// Where it listens; nil when it ended before printing it (a refused start).
  let url: String?
  /// Every reply body so far, for tests that search all output.
  private(set) var replies: [String] = []
  private let dir: String

  /// Starts `msglog serve ARGS` and waits until it prints where it listens or ends.
  init(_ s: Sandbox, _ args: [String] = [], environment: [String: String] = [:], useDefaultDB: Bool = true) {
    dir = s.dir
    child = s.start(
      ["serve", "--listen", "127.0.0.1:0"] + args, environment: environment, useDefaultDB: useDefaultDB)
    var found: String? = nil
    // A watchdog only (a server that never starts must not hang the suite).
    for _ in 0..<2400 {
      let ended = !child.process.isRunning
      let text = (try? String(contentsOfFile: child.outPath, encoding: .utf8)) ?? ""
      if let range = text.range(of: #"http://[^ \n]+"#, options: .regularExpression) { found = String(text[range]) }
      if found != nil || ended { break }
      usleep(25_000)
    }
    url = found.map { $0.hasSuffix("/") ? String($0.dropLast()) : $0 }
  }

  struct Reply: CustomStringConvertible {
    var status: Int
    var body: String
    var description: String { "\(status) \(body)" }
  }

  /// One request; a body is sent as `application/json`, as the page sends it.
  func request(_ method: String, _ path: String, _ body: String? = nil) -> Reply {
    guard let url else { return Reply(status: 0, body: "") }
    let base = dir + "/reply-" + UUID().uuidString
    var command = "curl -s -o '\(base).body' -w '%{http_code}' -X \(method)"
    if let body {
      FileManager.default.createFile(atPath: base + ".request", contents: Data(body.utf8))
      command += " -H 'Content-Type: application/json' --data-binary @'\(base).request'"
    }
    shell(command + " '\(url)\(path)' > '\(base).status'")
    let status = Int((try? String(contentsOfFile: base + ".status", encoding: .utf8)) ?? "") ?? 0
    let text = (try? String(contentsOfFile: base + ".body", encoding: .utf8)) ?? ""
    for suffix in [".body", ".status", ".request"] { try? FileManager.default.removeItem(atPath: base + suffix) }
    replies.append(text)
    return Reply(status: status, body: text)
  }

  /// Stops it (SIGTERM, if still running) and returns what it printed.
  func stop() -> Run {
    if child.process.isRunning { kill(child.process.processIdentifier, SIGTERM) }
    return child.finish()
  }
}
