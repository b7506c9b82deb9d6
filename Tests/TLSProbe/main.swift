import MsglogHTTPClient

#if canImport(Glibc)
  import Glibc
#endif

/// A static executable, as `msglog` is, that sends two GETs to an https://
/// URL (with a CA file) and prints what it got: the tests' proof that a
/// static program speaks TLS (through msglog-tls beside it) until the
/// command line has an https:// command of its own to run.
///
///     msglog-tls-probe URL [CAFILE]
let arguments = CommandLine.arguments
do {
  print("in process: \(TLSLibrary.canRunInProcess)")
  let client = HTTPClient(
    try HTTPURL(arguments[1]), .init(caFile: arguments.count > 2 ? arguments[2] : nil, idleTimeout: 30))
  for _ in 0..<2 {
    let response = try client.send(.get("/"), limit: 1 << 20)
    print("\(response.status) \(response.text)")
  }
  print("connections: \(client.connectionsOpened)")
  exit(0)
} catch {
  print("msglog: \(error)")
  exit(1)
}
