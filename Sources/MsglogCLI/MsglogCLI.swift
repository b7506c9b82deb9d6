import FoundationEssentials
import MsglogCore
import MsglogLMDB

#if canImport(Glibc)
  import Glibc
#endif

/// The `msglog` command line: parses, runs one command, and turns every error
/// into `msglog: <message>` on stderr and SPEC.md's exit code, in one place.
public enum MsglogCLI {
  public static let version = "0.1.0"

  /// Exit codes (SPEC.md, after BSD sysexits).
  public enum ExitCode {
    public static let success: Int32 = 0
    public static let failure: Int32 = 1
    public static let usage: Int32 = 64
    public static let conflict: Int32 = 75
  }

  /// The process entry point.
  public static func main() -> Never {
    // A reader that goes away must show up as EPIPE on the next write (and
    // end the command quietly), not kill the process mid-transaction.
    signal(SIGPIPE, SIG_IGN)
    let stdout = OutputStream(fd: 1)
    let stderr = OutputStream(fd: 2)
    let code: Int32
    switch rawArguments() {
    case .success(let arguments):
      // Only the variables msglog reads: building the whole environment
      // dictionary costs more than anything else at start-up.
      var environment: [String: String] = [:]
      for name in ["MSGLOG_DB", "MSGLOG_STREAM"] {
        if let value = getenv(name) { environment[name] = String(cString: value) }
      }
      code = run(
        arguments: arguments, environment: environment,
        stdin: StandardInput(), stdout: stdout, stderr: stderr)
    case .failure(let error):
      code = report(error, to: stderr)
    }
    try? stderr.flush()
    exit(code == ExitCode.success ? closeStandardOutput(stderr: stderr) : code)
  }

  /// Closes stdout and reports a failure to do so: some file systems (NFS,
  /// FUSE) report a failed write only when the file is closed, and a backup
  /// written with `export > file` must not end in exit 0 if it did not land.
  static func closeStandardOutput(stderr: OutputStream) -> Int32 {
    if close(1) == 0 || errno == EBADF || errno == EPIPE { return ExitCode.success }
    let code = report(OutputError.failed(errno: errno), to: stderr)
    try? stderr.flush()
    return code
  }

  /// Runs one command line; returns the exit code.
  public static func run(
    arguments: [String], environment: [String: String], stdin: some InputSource, stdout: OutputStream,
    stderr: OutputStream
  ) -> Int32 {
    let code: Int32
    do {
      var runner = try Runner(
        arguments: arguments, environment: environment, stdin: stdin, stdout: stdout, stderr: stderr)
      try runner.run()
      try stdout.flush()
      code = ExitCode.success
    } catch {
      try? stdout.flush()
      code = report(error, to: stderr)
    }
    try? stderr.flush()
    return code
  }

  /// The one place where errors become messages and exit codes.
  static func report(_ error: any Error, to stderr: OutputStream) -> Int32 {
    let message: String
    var hint: String? = nil
    let code: Int32
    switch error {
    case OutputError.closed:
      // The reader stopped reading (`msglog export | head -1`): that is
      // what it asked for, so end quietly, as git does.
      return ExitCode.success
    case OutputError.failed(let code):
      stderr.note("msglog: write error: " + systemMessage(code))
      return ExitCode.failure
    case let damage as DerivedDamage:
      return report(Integrity.damaged(damage), to: stderr)
    case let error as MsglogError:
      message = error.message
      hint = error.hint
      switch error.kind {
      case .usage: code = ExitCode.usage
      case .refused: code = ExitCode.failure
      case .conflict: code = ExitCode.conflict
      }
    case let error as LMDBError where error.isOutOfSpace:
      message = "the disk is full: the database could not grow (\(error))"
      hint = "nothing of this command was written, and everything before it is intact; free some space and retry"
      code = ExitCode.failure
    case let error as LMDBError:
      message = "database error: \(error.userMessage)"
      code = ExitCode.failure
    default:
      message = "\(error)"
      code = ExitCode.failure
    }
    stderr.note("msglog: " + message)
    if let hint { stderr.note("hint: " + hint) }
    return code
  }

  /// argv as strings, refusing an argument that is not valid UTF-8 (Swift's
  /// `CommandLine.arguments` would silently repair it).
  static func rawArguments() -> Result<[String], MsglogError> {
    var arguments: [String] = []
    for i in 1..<Int(CommandLine.argc) {
      guard let pointer = CommandLine.unsafeArgv[i] else { continue }
      let bytes = UnsafeRawBufferPointer(start: pointer, count: strlen(pointer))
      guard let text = String(validating: bytes, as: UTF8.self) else {
        return .failure(.usage("argument \(i) is not valid UTF-8"))
      }
      arguments.append(text)
    }
    return .success(arguments)
  }
}

/// Where a command reads its message text or import lines from.
public protocol InputSource {
  /// Everything, to the end.
  func readAll() throws -> [UInt8]
  /// Whether a person is typing (to say how to end the input).
  var isTerminal: Bool { get }
}

/// The process's stdin.
public struct StandardInput: InputSource {
  public init() {}

  public var isTerminal: Bool { isatty(0) == 1 }

  public func readAll() throws -> [UInt8] {
    var out: [UInt8] = []
    var chunk = [UInt8](repeating: 0, count: 1 << 16)
    while true {
      let n = chunk.withUnsafeMutableBytes { Glibc.read(0, $0.baseAddress, $0.count) }
      if n < 0 {
        if errno == EINTR { continue }
        throw MsglogError.refused("cannot read stdin: \(String(cString: strerror(errno)))")
      }
      if n == 0 { return out }
      out.append(contentsOf: chunk[0..<n])
    }
  }
}

/// Fixed bytes as stdin (tests, in-process runs).
public struct BytesInput: InputSource {
  let bytes: [UInt8]
  public init(_ bytes: [UInt8]) { self.bytes = bytes }
  public init(_ text: String) { self.bytes = Array(text.utf8) }
  public var isTerminal: Bool { false }
  public func readAll() throws -> [UInt8] { bytes }
}
