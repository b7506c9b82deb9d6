import Msglog

#if canImport(Glibc)
  import Glibc
#endif

extension Invocation {
  /// `msglog serve`: runs msglog-serve, found beside this binary, with the
  /// same arguments and environment. The server is a dynamic executable
  /// (its worker and event-loop threads, and GnuTLS for TLS, want the
  /// dynamic loader, which the static `msglog` has not); msglog-serve
  /// parses the same arguments with the same declaration table (`ServeProcess`).
  func serve() throws -> Never {
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
