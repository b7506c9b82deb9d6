import Foundation
import Testing

#if canImport(Glibc)
  import Glibc
#endif

/// `msglog serve` on a free port, run as a user runs it: requests with curl,
/// raw bytes through `LoopbackSocket(port:)`, and everything it printed when
/// it is stopped. The one way every test target starts a server.
public final class ServedLog {
  public let child: Sandbox.Child
  /// Where it listens, without a final slash (`http://127.0.0.1:PORT`, or
  /// `https://` with `--tls-cert`); nil
  /// when it ended before printing it (a refused start).
  public let url: String?
  /// Every reply body so far, for tests that search all output.
  public private(set) var replies: [String] = []
  private let dir: String

  /// Starts `msglog serve --listen LISTEN ARGS` and waits until it prints
  /// where it listens or ends; with `descriptors`, under `ulimit -n` (soft
  /// and hard); with `fileSizeBlocks`, under `ulimit -f` (the shell's
  /// blocks); with `redirections`, the shell's (`<&- 2>&-`: started
  /// without stdin and stderr); `ignoringHangUps`, as `nohup` starts it.
  public init(
    _ s: Sandbox, _ args: [String] = [], listen: String = "127.0.0.1:0", environment: [String: String] = [:],
    useDefaultDB: Bool = true, descriptors: Int? = nil, fileSizeBlocks: Int? = nil, redirections: String? = nil,
    ignoringHangUps: Bool = false
  ) {
    dir = s.dir
    let arguments = ["serve", "--listen", listen] + args
    if descriptors != nil || fileSizeBlocks != nil || redirections != nil || ignoringHangUps {
      let limits =
        (descriptors.map { "ulimit -n \($0) && " } ?? "") + (fileSizeBlocks.map { "ulimit -f \($0) && " } ?? "")
        + (ignoringHangUps ? "trap '' HUP && " : "")
      child = s.start(
        ["-c", limits + "exec \"$0\" \"$@\" " + (redirections ?? ""), Sandbox.binary] + arguments,
        environment: environment, useDefaultDB: useDefaultDB, runner: "/bin/sh")
    } else {
      child = s.start(arguments, environment: environment, useDefaultDB: useDefaultDB)
    }
    url = Self.waitForURL(child)
  }

  /// Starts `msglog ARGUMENTS` as they are given (a systemd unit's
  /// `ExecStart`, say), with only `environment`, and waits as above.
  public init(_ s: Sandbox, arguments: [String], environment: [String: String]) {
    dir = s.dir
    child = s.start(arguments, environment: environment, useDefaultDB: false)
    url = Self.waitForURL(child)
  }

  /// Where the server says it listens, once it has said so; nil when it ended first.
  private static func waitForURL(_ child: Sandbox.Child) -> String? {
    var found: String? = nil
    // A watchdog only (a server that never starts must not hang the suite).
    for _ in 0..<2400 {
      let ended = !child.process.isRunning
      let text = (try? String(contentsOfFile: child.outPath, encoding: .utf8)) ?? ""
      if let range = text.range(of: #"https?://[^ \n]+"#, options: .regularExpression) { found = String(text[range]) }
      if found != nil || ended { break }
      usleep(25_000)
    }
    return found.map { $0.hasSuffix("/") ? String($0.dropLast()) : $0 }
  }

  /// A server that has started: the test stops here, with what it printed,
  /// when it did not.
  public static func running(
    _ s: Sandbox, _ args: [String] = [], listen: String = "127.0.0.1:0", environment: [String: String] = [:],
    descriptors: Int? = nil
  ) throws -> ServedLog {
    let served = ServedLog(s, args, listen: listen, environment: environment, descriptors: descriptors)
    if served.url == nil {
      let run = served.stop()
      try #require(Bool(false), "the server printed no URL: \(run)")
    }
    return served
  }

  /// An operator's restore: stops this serve of `s`, puts the backup at
  /// `copy` (`msglog backup`) in the place of its LMDB database, lets
  /// `meanwhile` write to it, and serves it again on the same port (a
  /// replica's remote is where it was).
  public func restored(_ s: Sandbox, from copy: String, meanwhile: () throws -> Void = {}) throws -> ServedLog {
    let port = self.port
    _ = stop()
    try FileManager.default.removeItem(atPath: s.db)
    try FileManager.default.moveItem(atPath: copy, toPath: s.db)
    try meanwhile()
    return try ServedLog.running(s, listen: "127.0.0.1:\(port)")
  }

  /// The port it listens on (0 before it printed one).
  public var port: UInt16 { url.flatMap { $0.split(separator: ":").last }.flatMap { UInt16($0) } ?? 0 }
  public var pid: Int32 { child.process.processIdentifier }

  public struct Reply: CustomStringConvertible {
    public var status: Int
    public var body: String
    public var description: String { "\(status) \(body)" }
  }

  /// One request with curl; `path` is sent as is (no dot-segment folding),
  /// and a body as `application/json`, as the page sends it.
  @discardableResult
  public func request(_ method: String, _ path: String, _ body: String? = nil, headers: [String] = []) -> Reply {
    guard let url else { return Reply(status: 0, body: "") }
    let base = dir + "/reply-" + UUID().uuidString
    var command = "curl -s --path-as-is -o '\(base).body' -w '%{http_code}' -X \(method)"
    for header in headers { command += " -H '\(header)'" }
    if let body {
      _ = FileManager.default.createFile(atPath: base + ".request", contents: Data(body.utf8))
      command += " -H 'Content-Type: application/json' --data-binary @'\(base).request'"
    }
    shell(command + " '\(url)\(path)' > '\(base).status'")
    let status = Int((try? String(contentsOfFile: base + ".status", encoding: .utf8)) ?? "") ?? 0
    let text = (try? String(contentsOfFile: base + ".body", encoding: .utf8)) ?? ""
    for suffix in [".body", ".status", ".request"] { try? FileManager.default.removeItem(atPath: base + suffix) }
    replies.append(text)
    return Reply(status: status, body: text)
  }

  /// A server its test did not stop (a `#require` that threw before its
  /// `defer`, a test run killed) goes with the test's last reference to it:
  /// no test leaves a server running.
  deinit {
    if child.process.isRunning { kill(child.process.processIdentifier, SIGKILL) }
  }

  /// Stops it (SIGTERM, or `signal`, if still running) and returns what it
  /// printed. A server that crashed (a trap, an abort, a bad access),
  /// whenever it did, is an issue of the test that ran it, with what it
  /// printed: a crash a test's own checks would read only as requests
  /// unanswered.
  public func stop(signal: Int32 = SIGTERM, sourceLocation: SourceLocation = #_sourceLocation) -> Run {
    if child.process.isRunning { kill(child.process.processIdentifier, signal) }
    let run = child.finish()
    if [SIGILL, SIGTRAP, SIGABRT, SIGBUS, SIGFPE, SIGSEGV].map({ 128 + $0 }).contains(run.code) {
      Issue.record("the server crashed (signal \(run.code - 128)): \(run.stderr)", sourceLocation: sourceLocation)
    }
    return run
  }
}
