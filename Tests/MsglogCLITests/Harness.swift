import Foundation
import Testing

/// What one run of the binary did.
struct Run: CustomStringConvertible {
  var code: Int32
  var stdout: String
  var stderr: String

  var description: String { "exit \(code)\nstdout: \(stdout)\nstderr: \(stderr)" }
  var lines: [String] { stdout.split(separator: "\n", omittingEmptySubsequences: false).dropLast().map(String.init) }
}

/// Runs the real `msglog` binary against a database in its own temporary directory.
///
/// stdout and stderr go to files rather than pipes, so a child that prints
/// more than a pipe holds can never deadlock the test.
final class Sandbox: @unchecked Sendable {  // immutable after init
  let dir: String
  var db: String { dir + "/msglog.lmdb" }

  init() {
    dir = NSTemporaryDirectory() + "msglog-cli-" + UUID().uuidString
    try! FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
  }

  deinit { try? FileManager.default.removeItem(atPath: dir) }

  static let binary: String = {
    if let path = ProcessInfo.processInfo.environment["MSGLOG_BIN"] { return path }
    // The test bundle sits in the build products directory beside the binary.
    var url = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
    while url.path != "/" {
      let candidate = url.appendingPathComponent("msglog").path
      if FileManager.default.isExecutableFile(atPath: candidate), !candidate.hasSuffix(".xctest") {
        return candidate
      }
      url.deleteLastPathComponent()
    }
    fatalError("cannot find the msglog binary beside \(CommandLine.arguments[0]); set MSGLOG_BIN")
  }()

  /// Runs `msglog ARGS` with `MSGLOG_DB` set to this sandbox's database.
  @discardableResult
  func run(
    _ args: [String], stdin: Data = Data(), environment: [String: String] = [:], useDefaultDB: Bool = true,
    asNobody: Bool = false, runner: String? = nil
  ) -> Run {
    let process = start(
      args, stdin: stdin, environment: environment, useDefaultDB: useDefaultDB, asNobody: asNobody, runner: runner)
    process.process.waitUntilExit()
    return process.finish()
  }

  func run(_ args: String..., stdin: String = "") -> Run {
    run(args, stdin: Data(stdin.utf8))
  }

  struct Child {
    let process: Process
    let outPath: String
    let errPath: String

    func finish() -> Run {
      process.waitUntilExit()
      let out = (try? String(contentsOfFile: outPath, encoding: .utf8)) ?? ""
      let err = (try? String(contentsOfFile: errPath, encoding: .utf8)) ?? ""
      try? FileManager.default.removeItem(atPath: outPath)
      try? FileManager.default.removeItem(atPath: errPath)
      return Run(code: process.terminationStatus, stdout: out, stderr: err)
    }
  }

  /// Starts `msglog ARGS` without waiting (for concurrency tests).
  func start(
    _ args: [String], stdin: Data = Data(), environment: [String: String] = [:], useDefaultDB: Bool = true,
    stdout: FileHandle? = nil, asNobody: Bool = false, runner: String? = nil
  ) -> Child {
    let base = dir + "/run-" + UUID().uuidString
    let inPath = base + ".in", outPath = base + ".out", errPath = base + ".err"
    FileManager.default.createFile(atPath: inPath, contents: stdin)
    FileManager.default.createFile(atPath: outPath, contents: nil)
    FileManager.default.createFile(atPath: errPath, contents: nil)
    let process = Process()
    if let runner {
      process.executableURL = URL(fileURLWithPath: runner)
      process.arguments = args
    } else if asNobody {
      // Another user, who may read the database but not write it (needs root to switch).
      process.executableURL = URL(fileURLWithPath: "/usr/bin/setpriv")
      process.arguments = ["--reuid=65534", "--regid=65534", "--clear-groups", "--", Sandbox.binary] + args
    } else {
      process.executableURL = URL(fileURLWithPath: Sandbox.binary)
      process.arguments = args
    }
    process.currentDirectoryURL = URL(fileURLWithPath: dir)
    var env = ["PATH": "/usr/bin:/bin"]
    if useDefaultDB { env["MSGLOG_DB"] = db }
    env.merge(environment) { $1 }
    process.environment = env
    process.standardInput = FileHandle(forReadingAtPath: inPath)
    process.standardOutput = stdout ?? FileHandle(forWritingAtPath: outPath)
    process.standardError = FileHandle(forWritingAtPath: errPath)
    try! process.run()
    return Child(process: process, outPath: outPath, errPath: errPath)
  }

  /// The whole log as `export` prints it.
  func export() -> String {
    let r = run(["export"])
    #expect(r.code == 0, "\(r)")
    return r.stdout
  }

  /// Appends one message and returns its id.
  @discardableResult
  func append(_ text: String, sender: String? = nil, stream: String = "main") -> String {
    var args = ["append", "--stream", stream]
    if let sender { args += ["--sender", sender] }
    let r = run(args + ["--", text])
    #expect(r.code == 0, "\(r)")
    return r.stdout.trimmingCharacters(in: .newlines)
  }
}

/// Replaces RFC 3339 times, which differ on every run, with a placeholder.
func maskingTimes(_ text: String) -> String {
  text.replacingOccurrences(
    of: #"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z"#, with: "TIME", options: .regularExpression)
}

func fixture(_ name: String) -> String {
  URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
    .deletingLastPathComponent().appendingPathComponent("Fixtures/" + name).path
}
