import Msglog
import MsglogCLI
import MsglogServer

/// msglog-serve: `msglog serve`, on msglog's own HTTP engine. `msglog serve` runs this
/// program from beside itself (see Package.swift); run directly, it takes
/// the same arguments (`msglog-serve [serve] [--listen ADDR:PORT] …`).
let process = ServeProcess()
do {
  guard let settings = try process.settings() else { process.exit() }
  var configuration: ServerConfiguration
  do throws(ServerError) {
    configuration = try ServerConfiguration(
      listen: ListenAddress(parsing: settings.listen), token: settings.token, allowedHosts: settings.allowedHosts,
      allowedOrigins: settings.allowedOrigins, publicOrigins: settings.publicOrigins,
      trustedProxies: settings.trustedProxies,
      logHoldsTokens: {
        (try? EventLog(settings.location, configuration: .init(access: .readOnly)).holdsTokens()) == true
      })
    guard let format = LogFormat(rawValue: settings.logFormat) else {
      throw ServerError.usage(
        "invalid --log-format \(TerminalText.quoted(settings.logFormat))", hint: "give text, json or none")
    }
    configuration.logFormat = format
    configuration.metrics = settings.metrics
    switch (settings.tlsCertificate, settings.tlsKey) {
    case (let certificate?, let key?): configuration.tls = .init(certificate: certificate, key: key)
    case (nil, nil): break
    case (nil, _?): throw ServerError.usage("--tls-key needs --tls-cert", hint: "give both, PEM files")
    case (_?, nil): throw ServerError.usage("--tls-cert needs --tls-key", hint: "give both, PEM files")
    }
  } catch {
    throw CommandLineError.usage(error.message, hint: error.hint)
  }
  try process.catchStopSignals()
  let log = try process.openLog(settings.location)
  let server: HTTPServer
  let port: UInt16
  do {
    server = try HTTPServer(log: log, configuration: configuration)
    port = try server.start()
  } catch {
    throw CommandLineError.failed(error.message, hint: error.hint)
  }
  // The log's location as it may be shown: a PostgreSQL URL without its password.
  try process.say("msglog: serving \(log.location) on \(configuration.url(port: port))")
  for warning in configuration.warnings { process.warn(warning) }
  try process.waitForStopSignal()
  // Requests in flight finish, event streams end.
  server.stop()
  process.exit()
} catch {
  process.exit(after: error)
}
