import MsglogCLI

#if canImport(Glibc)
  import Glibc
#endif

/// msglog-serve: `msglog serve`, with libmicrohttpd. `msglog serve` runs
/// this program; run directly, it is msglog with the server built in.
MsglogCLI.server = { request in
  let server = HTTPServer(log: request.log, token: request.token)
  let port = try server.start(on: request.address)
  try request.stdout.line("msglog: serving \(request.location) on \(request.address.url(port: port))")
  try request.stdout.flush()
  var fds = [pollfd(fd: request.stopSignal, events: Int16(POLLIN), revents: 0)]
  while poll(&fds, 1, -1) < 0 && errno == EINTR {}
  server.stop()
}
MsglogCLI.main()
