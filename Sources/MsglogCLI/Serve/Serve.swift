import Msglog

#if canImport(Glibc)
  import Glibc
#endif

/// What `msglog serve` runs: set by the msglog-serve program, which links
/// libmicrohttpd. The static `msglog` binary cannot load it (a static
/// program cannot start a shared library's threads), so there `serve`
/// checks its arguments and then runs msglog-serve from beside itself.
package struct ServeRequest {
  package let log: EventLog
  package let address: ListenAddress
  package let token: String?
  package let location: String
  package let stdout: OutputStream
  /// Becomes readable on SIGINT or SIGTERM.
  package let stopSignal: Int32
}

extension MsglogCLI {
  nonisolated(unsafe) package static var server: ((ServeRequest) throws -> Void)? = nil
}

extension Invocation {
  /// `msglog serve`: runs until SIGINT or SIGTERM, then lets the requests
  /// in flight finish, ends the event streams and exits 0.
  func serve() throws {
    let address = try ListenAddress(parsing: args[Options.listen] ?? "127.0.0.1:8080")
    let token = args[Options.token] ?? environment["MSGLOG_TOKEN"].flatMap { $0.isEmpty ? nil : $0 }
    if let token, token.utf8.count < 16 {
      throw CommandLineError.usage(
        "the token is too short (at least 16 characters)", hint: "e.g. MSGLOG_TOKEN=$(openssl rand -hex 16)")
    }
    if !address.isLoopback && token == nil {
      throw CommandLineError.usage(
        "listening on \(address.text) lets other machines in, so it needs a token",
        hint: "set MSGLOG_TOKEN (or --token); clients send 'Authorization: Bearer TOKEN'")
    }
    guard let server = MsglogCLI.server else { try runServeProgram() }
    let log = try openLog(forWriting: true)
    let signals = try SignalPipe.install([SIGINT, SIGTERM])
    defer { signals.uninstall() }
    try server(
      ServeRequest(
        log: log, address: address, token: token, location: log.location, stdout: stdout,
        stopSignal: signals.readEnd))
  }

  /// Replaces this process with msglog-serve, found beside this binary,
  /// with the same arguments and environment.
  private func runServeProgram() throws -> Never {
    var buffer = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
    let length = readlink("/proc/self/exe", &buffer, buffer.count - 1)
    let me = length > 0 ? String(decoding: buffer[..<length].map { UInt8(bitPattern: $0) }, as: UTF8.self) : ""
    let program = String(me[..<(me.lastIndex(of: "/") ?? me.startIndex)]) + "/msglog-serve"
    let arguments = [program] + CommandLine.arguments.dropFirst()
    let argv: [UnsafeMutablePointer<CChar>?] = arguments.map { strdup($0) } + [nil]
    try stdout.flush()
    execv(program, argv)
    throw CommandLineError.failed(
      "cannot run \(program): \(String(cString: strerror(errno)))",
      hint: "msglog serve needs msglog-serve beside msglog: build it with 'swift build --product msglog-serve'")
  }
}
