import Msglog

#if canImport(Glibc)
  import Glibc
#endif

/// The `msglog` command line: parses, runs one command through an
/// `EventLog`, and turns every error into `msglog: <message>` on stderr and
/// an exit code, in one place (`Wording`).
public enum MsglogCLI {
  public static let version = msglogVersion

  /// Exit codes (after BSD sysexits).
  public enum ExitCode {
    public static let success: Int32 = 0
    public static let failure: Int32 = 1
    public static let usage: Int32 = 64
    public static let conflict: Int32 = 75
  }

  /// The process entry point.
  public static func main() -> Never {
    setUpProcess()
    let stdout = BufferedOutput(fd: 1)
    let stderr = BufferedOutput(fd: 2)
    let code: Int32
    switch rawArguments() {
    case .success(let arguments):
      // Only the variables msglog reads: building the whole environment
      // dictionary costs more than anything else at start-up.
      let environment = variables(["MSGLOG_DB", "MSGLOG_STREAM", "MSGLOG_TOKEN", "NO_COLOR", "TERM", "TMPDIR"])
      code = run(
        arguments: arguments, environment: environment, stdin: StandardInput(), stdout: stdout, stderr: stderr,
        colour: isatty(1) == 1, lmdbAssertionHandler: reportLMDBAssertion)
    case .failure(let error):
      code = Wording.report(error, to: stderr)
    }
    try? stderr.flush()
    exit(code == ExitCode.success ? closeStandardOutput(stderr: stderr) : code)
  }

  /// The environment variables `names` that are set. A value that is not
  /// UTF-8 is kept as NUL, which no real value holds, for the command
  /// that reads it to refuse (`Invocation.variable`): decoded, it named
  /// another path or stream than the user's.
  static func variables(_ names: [String]) -> [String: String] {
    var environment: [String: String] = [:]
    for name in names {
      if let value = getenv(name) { environment[name] = String(validatingCString: value) ?? "\u{0}" }
    }
    return environment
  }

  /// What msglog's processes (msglog, msglog-serve) set up first. (The
  /// logs they open report LMDB's own failed checks with
  /// `reportLMDBAssertion`, through their configuration.)
  static func setUpProcess() {
    holdClosedStandardDescriptors()
    // A reader that goes away must show up as EPIPE on the next write (and
    // end the command quietly), not kill the process mid-transaction.
    signal(SIGPIPE, SIG_IGN)
    // So must a file grown past the process's size limit (`ulimit -f`,
    // systemd's LimitFSIZE): EFBIG, said as such, not a kill.
    signal(SIGXFSZ, SIG_IGN)
    installTruncationGuard()
    // Ctrl-C during a first import (or a backup) leaves no staging directory behind.
    EventLog.removeStagingOnTerminatingSignals()
    installFaultReport()
  }

  /// A standard descriptor the process was started without (`2>&-`) is
  /// held by /dev/null, opened the wrong way round: the next descriptor the
  /// process opens (a wake pipe, a client's socket) would otherwise take its
  /// number, and what is written to stderr would go there — serve's request
  /// log into its own stop pipe. Reading or writing it still fails as on a
  /// closed one (EBADF).
  static func holdClosedStandardDescriptors() {
    for fd in Int32(0)...2 where fcntl(fd, F_GETFD) == -1 && errno == EBADF {
      let held = open("/dev/null", fd == 0 ? O_WRONLY : O_RDONLY)
      guard held >= 0, held != fd else { continue }
      dup2(held, fd)
      close(held)
    }
  }

  /// Whether standard descriptor `fd` is closed, or held closed as above.
  static func isClosed(_ fd: Int32) -> Bool {
    let flags = fcntl(fd, F_GETFL)
    return flags < 0 || flags & O_ACCMODE == (fd == 0 ? O_WRONLY : O_RDONLY)
  }

  /// Runs one command line; returns the exit code.
  ///
  /// - Parameters:
  ///   - colour: whether stdout is a terminal (colour is also off when
  ///     `NO_COLOR` is set or `TERM` is `dumb`).
  ///   - lmdbAssertionHandler: for the logs the command opens (see
  ///     `EventLog.Configuration`); the process's `main` reports and exits.
  public static func run(
    arguments: [String], environment: [String: String], stdin: some InputSource, stdout: BufferedOutput,
    stderr: BufferedOutput, colour: Bool = false,
    lmdbAssertionHandler: (@Sendable (_ lockless: Bool, _ message: String) -> Void)? = nil
  ) -> Int32 {
    let code: Int32
    do {
      var invocation = try Invocation(
        arguments: arguments, environment: environment, stdin: stdin, stdout: stdout, stderr: stderr,
        terminal: colour, lmdbAssertionHandler: lmdbAssertionHandler)
      try invocation.run()
      try stdout.flush()
      code = ExitCode.success
    } catch {
      try? stdout.flush()
      code = Wording.report(error, to: stderr)
    }
    try? stderr.flush()
    return code
  }

  /// Closes stdout and reports a failure to do so: some file systems (NFS,
  /// FUSE) report a failed write only when the file is closed, and a backup
  /// written with `export > file` must not end in exit 0 if it did not land.
  static func closeStandardOutput(stderr: BufferedOutput) -> Int32 {
    if close(1) == 0 || errno == EBADF || errno == EPIPE { return ExitCode.success }
    let code = Wording.report(OutputError.failed(errno: errno), to: stderr)
    try? stderr.flush()
    return code
  }

  /// LMDB maps the data file whole; a page read past the end of a file cut
  /// short (which the checks at opening cannot always see) raises SIGBUS.
  /// Say so in one line and exit 1 rather than crash, leaving no staging
  /// directory of a backup or first write behind. Only async-signal-safe
  /// calls in the handler: unlink(2), rmdir(2), write(2) and _exit(2).
  static func installTruncationGuard() {
    var action = sigaction()
    action.__sigaction_handler.sa_handler = { _ in
      EventLog.removeStagingDirectories()
      let message: StaticString =
        "msglog: a read of the database file faulted (the file cut short, its pages damaged, or a disk error)\n"
      _ = Glibc.write(2, message.utf8Start, message.utf8CodeUnitCount)
      _exit(1)
    }
    sigaction(SIGBUS, &action, nil)
  }

  /// Pages that make no sense can still fault inside LMDB (a flipped flag
  /// in a leaf's node sends LMDB 0.9.24 to a sub-database that does not
  /// exist): say what it may be in one line, then fault on into whatever
  /// handled SIGSEGV before (the default's core, Swift's backtracer) — it
  /// may as well be a bug of msglog's, whose crash must stay a crash. (The
  /// sizes of values read are checked, `PageBounds`: no read of msglog's
  /// own runs off the map.) A SIGSEGV sent by kill(2) is passed on unsaid.
  static func installFaultReport() {
    var action = sigaction()
    action.sa_flags = SA_SIGINFO
    action.__sigaction_handler.sa_sigaction = { _, info, _ in
      let fault = (info?.pointee.si_code ?? 0) > 0  // the kernel's, not a sender's
      if fault {
        EventLog.removeStagingDirectories()
        let message: StaticString =
          "msglog: crashed (SIGSEGV): the database's pages may be damaged (if 'msglog verify' crashes too, restore a backup or an export), or this is a bug in msglog\n"
        _ = Glibc.write(2, message.utf8Start, message.utf8CodeUnitCount)
      }
      sigaction(SIGSEGV, &MsglogCLI.faultActionBefore, nil)
      // A fault recurs when the handler returns, into that action; a sent
      // signal is sent again.
      if !fault { raise(SIGSEGV) }
    }
    sigaction(SIGSEGV, &action, &faultActionBefore)
  }

  /// What handled SIGSEGV before `installFaultReport`, restored by its
  /// handler (which can reach no object).
  nonisolated(unsafe) static var faultActionBefore = sigaction()

  /// LMDB stopped on pages that make no sense: in a read without the lock
  /// file, because a commit changed them meanwhile; otherwise, damage. One
  /// clear message and exit 1 instead of LMDB's abort.
  @Sendable static func reportLMDBAssertion(lockless: Bool, message: String) {
    // The command line's own words: what LMDB found is no library error.
    let error: CommandLineError =
      lockless
      ? .failed(
        "the database changed while it was read (it is read-only to you, so msglog reads it without a lock); try again")
      : .failed("LMDB found the database inconsistent (\(message)): it is damaged; 'msglog verify' says where")
    let stderr = BufferedOutput(fd: 2)
    _ = Wording.report(error, to: stderr)
    try? stderr.flush()
    _exit(1)
  }

  /// argv as strings, refusing an argument that is not valid UTF-8 (Swift's
  /// `CommandLine.arguments` would silently repair it).
  static func rawArguments() -> Result<[String], CommandLineError> {
    var arguments: [String] = []
    for i in 1..<Int(CommandLine.argc) {
      guard let pointer = CommandLine.unsafeArgv[i] else { continue }
      let bytes = UnsafeRawBufferPointer(start: pointer, count: strlen(pointer))
      guard let text = String(validating: bytes, as: UTF8.self) else {
        return .failure(CommandLineError.usage("argument \(i) is not valid UTF-8"))
      }
      arguments.append(text)
    }
    return .success(arguments)
  }
}
