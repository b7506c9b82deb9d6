import Msglog

#if canImport(Glibc)
  import Glibc
#endif

/// What a request must show to be served, beyond its route: on localhost
/// the API needs no token, so every page the user's browser opens can send
/// requests to it, and these checks are what keeps those pages out.
///
/// - `Host` must name this server: a loopback name or address, the listen
///   address, or a name given with `--allow-host`. A page on a name the
///   attacker controls, made to resolve to 127.0.0.1 (DNS rebinding), sends
///   its own name (Jupyter's and Vite's check; CVE-2025-24010).
/// - A write (`POST`) must be `Content-Type: application/json`, which a
///   foreign page cannot send without a CORS preflight (the three "simple"
///   types need none), and must not come from another origin: a present
///   `Origin` that is not the server's own (`null` from a `file://` page
///   included), or `Sec-Fetch-Site: cross-site` or `same-site` (another
///   port), is refused — unless `--allow-origin` names that origin. Behind
///   a proxy that ends TLS the page's origin is not `http://` + `Host`:
///   `--public-origin` names it (its host is then served too), and a
///   `--trusted-proxy`'s `X-Forwarded-Proto` gives the scheme
///   (`Request.forwardedScheme`).
/// - The token, when one is set: `Authorization: Bearer TOKEN`, the scheme
///   in any case, the token compared in constant time.
package struct RequestPolicy: Sendable {
  package var token: [UInt8]?
  /// Names given with `--allow-host`, in lowercase.
  package var allowedHosts: Set<String>
  /// Origins given with `--allow-origin`, in lowercase: they get CORS headers.
  package var allowedOrigins: Set<String>
  /// The listen address's host as written (`192.168.1.5`, `[::1]`); nil
  /// for a wildcard, which names no host.
  package var listenHost: String?
  /// `http`, or `https` when the server speaks TLS: the page's own origin's scheme.
  package var scheme: String
  /// Origins the page is reached at through a proxy (`--public-origin`),
  /// as `origin(_:)` writes them: the page's own too.
  package var publicOrigins: Set<String>
  /// The hosts of `publicOrigins`, served as `--allow-host` names are.
  private var publicHosts: Set<String>

  package init(
    token: String? = nil, allowedHosts: [String] = [], allowedOrigins: [String] = [], listenHost: String? = nil,
    scheme: String = "http", publicOrigins: [String] = []
  ) {
    self.scheme = scheme
    let origins = publicOrigins.compactMap(Self.origin)
    self.publicOrigins = Set(origins)
    publicHosts = Set(origins.compactMap { origin in Self.hostName(String(origin.drop { $0 != "/" }.dropFirst(2))) })
    self.token = token.map { Array($0.utf8) }
    self.allowedHosts = Set(allowedHosts.map { $0.lowercased() })
    self.allowedOrigins = Set(allowedOrigins.map { $0.lowercased() })
    self.listenHost = listenHost?.lowercased()
  }

  // MARK: - Host

  /// 403 unless `Host` names this server. HTTP/1.0 may leave it out (no
  /// browser does); HTTP/1.1 must send it (400).
  package func checkHost(_ request: Request) throws(HTTPError) {
    let hosts = request.headers(named: "host")
    guard hosts.count <= 1 else { throw .badFraming("the request has more than one Host header") }
    guard let host = hosts.first else {
      if request.version == "HTTP/1.0" { return }
      throw .badFraming("an HTTP/1.1 request needs a Host header")
    }
    guard let name = Self.hostName(host) else { throw .badRequest("the Host header \(quoted(host)) is malformed") }
    guard isServed(name) else {
      throw .forbidden(
        "this server does not answer to the host \(quoted(name)); "
          + "start it with --allow-host \(name) if that name is meant to reach it")
    }
  }

  /// The host part of a `Host` value (`name`, `name:port`, `[v6]:port`), in lowercase.
  static func hostName(_ value: String) -> String? {
    // ASCII before lowercasing: Unicode's would make the Kelvin sign a `k`.
    guard value.utf8.allSatisfy({ $0 < 0x80 }) else { return nil }
    let value = value.lowercased()
    let name: Substring
    if value.hasPrefix("[") {
      guard let close = value.firstIndex(of: "]") else { return nil }
      name = value[...close]
      let rest = value[value.index(after: close)...]
      guard rest.isEmpty || (rest.first == ":" && rest.dropFirst().allSatisfy(\.isASCIIDigit)) else { return nil }
    } else {
      let colon = value.firstIndex(of: ":")
      name = value[..<(colon ?? value.endIndex)]
      if let colon { guard value[value.index(after: colon)...].allSatisfy(\.isASCIIDigit) else { return nil } }
    }
    // Bytes, not Unicode properties: every request's `Host` is looked at
    // (a write's up to three times), and a scalar's properties were 3 % of
    // serving an append. Lowercased above: no `A`…`Z` is left.
    let allowed = name.utf8.allSatisfy { byte in
      switch byte {
      case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "0")...UInt8(ascii: "9"):
        true
      case UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"), UInt8(ascii: "["), UInt8(ascii: "]"),
        UInt8(ascii: ":"):
        true
      default: false
      }
    }
    return !name.isEmpty && allowed ? String(name) : nil
  }

  private func isServed(_ name: String) -> Bool {
    if name == "localhost" || allowedHosts.contains(name) || publicHosts.contains(name) || name == listenHost {
      return true
    }
    if name.hasPrefix("[") {
      var bytes = [UInt8](repeating: 0, count: 16)
      return inet_pton(AF_INET6, String(name.dropFirst().dropLast()), &bytes) == 1
        && bytes == [UInt8](repeating: 0, count: 15) + [1]
    }
    var address = in_addr()
    return inet_pton(AF_INET, name, &address) == 1 && UInt32(bigEndian: address.s_addr) >> 24 == 127
  }

  // MARK: - Writes from other origins

  /// 403 for a write a foreign page could have sent.
  package func checkWrite(_ request: Request) throws(HTTPError) {
    let mediaType = request.header("content-type").map { type in
      String(type.prefix { $0 != ";" }).trimmingSpaces.lowercased()
    }
    guard mediaType == "application/json" else {
      throw .forbidden("a write must be sent as Content-Type: application/json")
    }
    let origin = request.header("origin")
    let site = request.header("sec-fetch-site")?.lowercased()
    if let origin, !isOwn(origin, of: request), allowedCrossOrigin(request) == nil {
      throw .forbidden("writes from the origin \(quoted(origin)) are refused; --allow-origin lets one in")
    }
    if site == "cross-site" || site == "same-site", allowedCrossOrigin(request) == nil {
      throw .forbidden("writes from another site are refused (Sec-Fetch-Site: \(site!)); --allow-origin lets one in")
    }
  }

  /// The page's own origin: this server as the browser reached it — its
  /// scheme (a trusted proxy's word on it first) and `Host`, or an origin
  /// `--public-origin` names.
  private func isOwn(_ origin: String, of request: Request) -> Bool {
    guard let given = Self.origin(origin) else { return false }
    if publicOrigins.contains(given) { return true }
    guard let host = request.header("host") else { return false }
    return given == Self.origin((request.forwardedScheme ?? scheme) + "://" + host)
  }

  /// An origin as a browser writes it in `Origin`: in lowercase, without
  /// its scheme's default port (`https://chat.example.org:443` is
  /// `https://chat.example.org`); nil for what is no `http(s)://host[:port]`.
  package static func origin(_ text: String) -> String? {
    let lower = text.lowercased()
    for (scheme, port) in [("http://", ":80"), ("https://", ":443")] where lower.hasPrefix(scheme) {
      guard hostName(String(lower.dropFirst(scheme.count))) != nil else { return nil }
      return lower.hasSuffix(port) ? String(lower.dropLast(port.count)) : lower
    }
    return nil
  }

  /// The request's `Origin` when `--allow-origin` names it (CORS headers
  /// then go with the answer); nil otherwise.
  package func allowedCrossOrigin(_ request: Request) -> String? {
    guard let origin = request.header("origin"), allowedOrigins.contains(origin.lowercased()) else { return nil }
    return origin
  }

  // MARK: - Token

  /// 401 unless the request carries the token, when one is set.
  package func checkToken(_ request: Request) throws(HTTPError) {
    guard token != nil else { return }
    var needed = HTTPError(
      status: 401, message: "a bearer token is needed: send 'Authorization: Bearer TOKEN'",
      headers: [("WWW-Authenticate", "Bearer")])
    needed.reason = "missing"
    guard let candidate = Self.bearer(request) else { throw needed }
    // One was sent and is not this server's (RFC 6750's invalid_token).
    var refusal = HTTPError(
      status: 401, message: "the bearer token is not valid for this server",
      headers: [("WWW-Authenticate", #"Bearer error="invalid_token""#)])
    refusal.reason = "unknown"
    guard isOperatorToken(candidate) else { throw refusal }
  }

  /// The token of `Authorization: Bearer TOKEN` (the scheme in any case);
  /// nil when there is none.
  package static func bearer(_ request: Request) -> [UInt8]? {
    guard let header = request.header("authorization") else { return nil }
    let bytes = Array(header.utf8)
    guard let space = bytes.firstIndex(where: { $0 == 0x20 || $0 == 0x09 }),
      String(decoding: bytes[..<space], as: UTF8.self).lowercased() == "bearer"
    else { return nil }
    var given = bytes[space...].drop { $0 == 0x20 || $0 == 0x09 }
    while given.last == 0x20 || given.last == 0x09 { given.removeLast() }
    return Array(given)
  }

  /// Whether `candidate` is the operator's token (`--token`).
  package func isOperatorToken(_ candidate: [UInt8]) -> Bool {
    guard let token else { return false }
    // Constant time in the token: every byte of it is compared, whatever the
    // first difference, and a length mismatch only adds to the difference.
    var difference = UInt8(candidate.count == token.count ? 0 : 1)
    for i in 0..<token.count { difference |= token[i] ^ (i < candidate.count ? candidate[i] : 0) }
    return difference == 0
  }

  private func quoted(_ text: String) -> String { TerminalText.quoted(text) }
}

extension Character {
  fileprivate var isASCIIDigit: Bool { isASCII && isNumber }
}

extension String {
  fileprivate var trimmingSpaces: Substring {
    let start = firstIndex { $0 != " " && $0 != "\t" } ?? endIndex
    let end = lastIndex { $0 != " " && $0 != "\t" }.map(index(after:)) ?? start
    return self[start..<max(start, end)]
  }
}
