import Msglog

/// How the server runs: where it listens, who it lets in, and the limits
/// that keep it answering.
package struct ServerConfiguration: Sendable {
  package var listen: ListenAddress
  /// The bearer token every API request must carry, when one is set.
  package var token: String?
  /// Host names answered besides loopback ones and the listen address (`--allow-host`).
  package var allowedHosts: [String]
  /// Origins whose pages may call the API, with CORS headers (`--allow-origin`).
  package var allowedOrigins: [String]
  /// Origins the page is reached at through a proxy (`--public-origin`):
  /// writes from them are the page's own, and their hosts are served.
  package var publicOrigins: [String] = []
  /// Peers whose forwarded client address and scheme are believed (`--trusted-proxy`).
  package var trustedProxies = TrustedProxies.none
  /// How long a client has to send a request's headers, from its connection
  /// (or the end of its previous request) on: slowly trickled headers
  /// cannot hold a connection for ever.
  package var headerDeadline: Double = 10
  /// How long a streamed answer waits for a client that takes nothing.
  package var stallLimit: Double = 30
  /// Connections at once (nil: from the descriptor limit, raised to the hard one).
  package var connectionLimits: ConnectionLimits? = nil
  /// Each request's line on stderr (`--log-format`).
  package var logFormat: LogFormat = .text
  /// Counts for `/metrics` (off with `--no-metrics`: nothing counted, no route).
  package var metrics = true
  /// `--tls-cert` and `--tls-key`: HTTPS instead of HTTP.
  package var tls: TLSFiles? = nil

  /// A PEM certificate (chain) and its private key.
  package struct TLSFiles: Sendable, Equatable {
    package var certificate: String
    package var key: String

    package init(certificate: String, key: String) {
      self.certificate = certificate
      self.key = key
    }
  }

  /// A request body over this is refused with 413 (a message is at most
  /// 1 MiB of text; escaping and the other members fit in the rest).
  package static let bodyLimit = 1 << 20 + 64 * 1024

  package init(
    listen: ListenAddress, token: String? = nil, allowedHosts: [String] = [], allowedOrigins: [String] = [],
    publicOrigins: [String] = [], trustedProxies: [String] = [], logHoldsTokens: () -> Bool = { false }
  ) throws(ServerError) {
    self.listen = listen
    self.token = token
    if let token, token.utf8.count < 16 {
      throw .usage("the token is too short (at least 16 characters)", hint: "e.g. MSGLOG_TOKEN=$(openssl rand -hex 16)")
    }
    // A log that holds named tokens asks every request for one on every
    // address (`TokenGate`): the operator's token is then not needed.
    if !listen.isLoopback && token == nil && !logHoldsTokens() {
      throw .usage(
        "listening on \(listen.text) lets other machines in, so it needs a token",
        hint: "set MSGLOG_TOKEN (or --token); clients send 'Authorization: Bearer TOKEN'")
    }
    for host in allowedHosts where RequestPolicy.hostName(host) != host.lowercased() {
      throw .usage(
        "--allow-host takes a host name without a port, not \(quoted(host))", hint: "e.g. --allow-host msglog.lan")
    }
    self.allowedHosts = allowedHosts
    for origin in allowedOrigins where !Self.isOrigin(origin) {
      throw .usage(
        "--allow-origin takes an origin (scheme://host[:port]), not \(quoted(origin))",
        hint: "e.g. --allow-origin http://localhost:3000")
    }
    self.allowedOrigins = allowedOrigins
    for origin in publicOrigins where !Self.isOrigin(origin) {
      throw .usage(
        "--public-origin takes the origin people's browsers reach the page at (scheme://host[:port]), "
          + "not \(quoted(origin))",
        hint: "e.g. --public-origin https://chat.example.org")
    }
    self.publicOrigins = publicOrigins
    self.trustedProxies = try TrustedProxies(trustedProxies)
  }

  /// `http://host[:port]` or `https://…`, nothing after (an origin has no path).
  static func isOrigin(_ text: String) -> Bool {
    let lower = text.lowercased()
    for scheme in ["http://", "https://"] where lower.hasPrefix(scheme) {
      return RequestPolicy.hostName(String(lower.dropFirst(scheme.count))) != nil
    }
    return false
  }

  /// The policy every request is checked against.
  var policy: RequestPolicy {
    RequestPolicy(
      token: token, allowedHosts: allowedHosts, allowedOrigins: allowedOrigins,
      listenHost: listen.isWildcard ? nil : listen.hostText, scheme: tls == nil ? "http" : "https",
      publicOrigins: publicOrigins)
  }

  /// Why to worry, said once at start: a token over plain HTTP to other machines.
  package var warnings: [String] {
    guard !listen.isLoopback, tls == nil else { return [] }
    return [
      "listening on \(listen.text) without TLS: the token and every message travel in clear; "
        + "give --tls-cert and --tls-key, or put a TLS proxy in front"
    ]
  }

  /// The URL a browser opens, with the port actually bound.
  package func url(port: UInt16) -> String {
    let url = listen.url(port: port)
    return tls == nil ? url : "https" + url.dropFirst("http".count)
  }
}

private func quoted(_ text: String) -> String { TerminalText.quoted(text) }
