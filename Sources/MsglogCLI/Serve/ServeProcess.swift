import Msglog

#if canImport(Glibc)
  import Glibc
#endif

/// msglog-serve's process, as msglog's own: its arguments parsed by the
/// declaration table (`[serve] OPTIONS`, so that `msglog serve …`, which
/// runs msglog-serve with its own arguments, and `msglog-serve …` mean the
/// same), help and version as `msglog serve` prints them, and errors as
/// `msglog: …` with msglog's exit codes.
package final class ServeProcess {
  package let stdout = BufferedOutput(fd: 1)
  let stderr = BufferedOutput(fd: 2)
  let environment: [String: String]
  private var stopSignals: SignalPipe?

  /// `serve`'s settings.
  package struct Settings {
    /// `--db`, else `MSGLOG_DB`, else `./msglog.lmdb`, as given.
    package var location: String
    /// `--listen`, else `127.0.0.1:8080`.
    package var listen: String
    /// `--token`, else `MSGLOG_TOKEN`.
    package var token: String?
    /// `--allow-host`, each time given.
    package var allowedHosts: [String]
    /// `--allow-origin`, each time given.
    package var allowedOrigins: [String]
    /// `--public-origin`, each time given.
    package var publicOrigins: [String]
    /// `--trusted-proxy`, each time given.
    package var trustedProxies: [String]
    /// `--log-format`, else `text`.
    package var logFormat: String
    /// Not `--no-metrics`.
    package var metrics: Bool
    /// `--tls-cert` and `--tls-key`, both or neither.
    package var tlsCertificate: String?
    package var tlsKey: String?
  }

  package init() {
    MsglogCLI.setUpProcess()
    environment = MsglogCLI.variables(["MSGLOG_DB", "MSGLOG_TOKEN"])
  }

  /// The log to serve, opened for writing, reporting LMDB's own failed
  /// checks as msglog does.
  ///
  /// A log no msglog of this version can use (a newer msglog's format,
  /// another program's database) is refused here, as every other command
  /// refuses it: served, it answered every request 409 while `/livez`
  /// said the process was well. A store that is away, or a database not
  /// made yet, is served (it may come, or come back).
  package func openLog(_ location: String) throws -> EventLog {
    let log = try EventLog(location, configuration: .init(lmdbAssertionHandler: MsglogCLI.reportLMDBAssertion))
    do {
      _ = try log.headSeq()
    } catch let error as MsglogError where error.category == .incompatible {
      throw error
    } catch {}
    return log
  }

  /// The options, or nil when help or the version was asked for (and printed).
  package func settings() throws -> Settings? {
    var arguments = try MsglogCLI.rawArguments().get()
    // The command's name is optional: msglog-serve runs nothing else.
    let parsed = try Arguments(parsing: arguments)
    if let command = parsed.positionals.first {
      guard command == CommandName.serve.rawValue else {
        throw CommandLineError.usage(
          "msglog-serve runs only 'serve', not \(TerminalText.quoted(command))",
          hint: "use msglog for the other commands")
      }
    } else {
      arguments.append(CommandName.serve.rawValue)
    }
    let invocation = try Invocation(
      arguments: arguments, environment: environment, stdin: StandardInput(), stdout: stdout, stderr: stderr,
      terminal: false)
    guard let command = invocation.command else { return nil }
    if invocation.args.has(Options.help) {
      try stdout.write(Help.page(command))
      return nil
    }
    if invocation.args.has(Options.version) {
      try stdout.line("msglog \(MsglogCLI.version)")
      return nil
    }
    try invocation.args.check(against: command, positionals: invocation.operands)
    return Settings(
      location: try invocation.location,
      listen: invocation.args[Options.listen] ?? "127.0.0.1:8080",
      token: try invocation.args[Options.token] ?? invocation.variable("MSGLOG_TOKEN"),
      allowedHosts: invocation.args.values(Options.allowHost),
      allowedOrigins: invocation.args.values(Options.allowOrigin),
      publicOrigins: invocation.args.values(Options.publicOrigin),
      trustedProxies: invocation.args.values(Options.trustedProxy),
      logFormat: invocation.args[Options.logFormat] ?? "text", metrics: !invocation.args.has(Options.noMetrics),
      tlsCertificate: invocation.args[Options.tlsCert], tlsKey: invocation.args[Options.tlsKey])
  }

  /// Prints a line on stdout at once (the banner that says where it listens).
  package func say(_ line: String) throws {
    try stdout.line(line)
    try stdout.flush()
  }

  /// `msglog: warn: …` on stderr at once.
  package func warn(_ message: String) {
    try? stderr.line("msglog: warn: \(message)")
    try? stderr.flush()
  }

  /// Catches SIGINT, SIGTERM and SIGHUP from now on: called before the
  /// banner, so that a stop sent as soon as the banner is seen (a
  /// supervisor, a test) is a clean stop, not the default action's kill. A
  /// hang-up (the terminal it ran in closed) stops it the same way — a kill
  /// would leave writes that committed unanswered — unless the process was
  /// started with it ignored (`nohup`): then it serves on.
  package func catchStopSignals() throws {
    stopSignals = try SignalPipe.install(Self.isIgnored(SIGHUP) ? [SIGINT, SIGTERM] : [SIGINT, SIGTERM, SIGHUP])
  }

  /// Whether `signal` is ignored (as the process was started, `nohup`).
  private static func isIgnored(_ signal: Int32) -> Bool {
    var current = sigaction()
    guard sigaction(signal, nil, &current) == 0 else { return false }
    return current.__sigaction_handler.sa_handler.map { unsafeBitCast($0, to: Int.self) } == 1  // SIG_IGN
  }

  /// Blocks until SIGINT, SIGTERM or SIGHUP (caught since `catchStopSignals()`).
  package func waitForStopSignal() throws {
    if stopSignals == nil { try catchStopSignals() }
    guard let signals = stopSignals else { return }
    defer {
      signals.uninstall()
      stopSignals = nil
    }
    var fds = [pollfd(fd: signals.readEnd, events: Int16(POLLIN), revents: 0)]
    while poll(&fds, 1, -1) < 0 && errno == EINTR {}
  }

  /// Ends the process: exit 0, or the error reported as msglog reports it.
  package func exit(after error: (any Error)? = nil) -> Never {
    var code = MsglogCLI.ExitCode.success
    if let error {
      try? stdout.flush()
      code = Wording.report(error, to: stderr)
    }
    try? stdout.flush()
    try? stderr.flush()
    fflush(nil)
    // Without exit()'s handlers: threads of the server may still run (a
    // worker, a spare thread finishing a commit, a PostgreSQL connection
    // being made), and the C libraries' cleanups that exit() runs (libpq's
    // OpenSSL, GnuTLS) free what they use — "double free or corruption"
    // at a stop, seen in CI. What must outlive the process is already done:
    // commits are durable when answered, and the output is flushed (the
    // request log writes with write(2)).
    Glibc._exit(code)
  }
}
