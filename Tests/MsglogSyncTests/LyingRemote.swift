import Foundation
import MsglogTestSupport
import Testing

#if canImport(Glibc)
  import Glibc
#endif

/// Servers/lying_remote.py, running in front of a real `msglog serve`: it
/// forwards every request until the test names a lie (`lie(_:)`), then
/// tells it — what a malicious remote would send a replica.
final class LyingRemote: @unchecked Sendable {  // the port is fixed; the mode is a file
  let port: UInt16
  private let child: Sandbox.Child
  private let modePath: String

  init(_ s: Sandbox, target: UInt16) throws {
    modePath = s.dir + "/lie-" + UUID().uuidString
    child = s.start(
      [repositoryRoot + "/Tests/MsglogSyncTests/Servers/lying_remote.py", String(target), modePath],
      useDefaultDB: false, runner: "/usr/bin/python3")
    var found: UInt16? = nil
    // A watchdog only: a server that never starts must not hang the suite.
    for _ in 0..<800 {
      let text = (try? String(contentsOfFile: child.outPath, encoding: .utf8)) ?? ""
      if let line = text.split(separator: "\n").first(where: { $0.hasPrefix("port ") }) {
        found = UInt16(line.dropFirst(5))
      }
      if found != nil || !child.process.isRunning { break }
      usleep(25_000)
    }
    guard let found else {
      let run = child.process.isRunning ? nil : child.finish()
      try #require(Bool(false), "the lying remote did not start: \(String(describing: run))")
      fatalError()
    }
    port = found
  }

  deinit { stop() }

  var url: String { "http://127.0.0.1:\(port)" }

  /// The lie told from the next request on ("" forwards everything).
  func lie(_ mode: String) { _ = FileManager.default.createFile(atPath: modePath, contents: Data(mode.utf8)) }

  /// The requests it received, as "METHOD PATH".
  var requests: [String] {
    ((try? String(contentsOfFile: modePath + ".log", encoding: .utf8)) ?? "").split(separator: "\n").map(String.init)
  }

  func stop() {
    if child.process.isRunning { kill(child.process.processIdentifier, SIGKILL) }
    _ = child.finish()
  }
}

/// Runs msglog with `args` in `sandbox` under a Python parent that prints
/// the child's peak resident memory (`ru_maxrss`, KiB) on its last stderr
/// line, and returns the run with that figure.
func runMeasuringMemory(_ sandbox: Sandbox, _ args: [String]) -> (Run, kilobytes: Int) {
  let script = """
    import resource, subprocess, sys
    code = subprocess.run(sys.argv[1:]).returncode
    print("maxrss", resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss, file=sys.stderr)
    sys.exit(code)
    """
  var run = sandbox.run(["-c", script, Sandbox.binary] + args, runner: "/usr/bin/python3")
  var lines = run.stderr.split(separator: "\n").map(String.init)
  let figure = lines.last.flatMap { $0.hasPrefix("maxrss ") ? Int($0.dropFirst(7)) : nil } ?? -1
  if figure >= 0 { lines.removeLast() }
  run.stderr = lines.map { $0 + "\n" }.joined()
  return (run, figure)
}
