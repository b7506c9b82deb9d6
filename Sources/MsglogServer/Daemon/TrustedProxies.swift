import Msglog

#if canImport(Glibc)
  import Glibc
#endif

/// `--trusted-proxy`: the peers whose word about the client is believed.
/// Behind a reverse proxy every connection comes from the proxy, so the
/// client's address and the scheme it used are what the proxy says in
/// `X-Forwarded-For` / `Forwarded: for=` and `X-Forwarded-Proto` /
/// `Forwarded: proto=`. Any client can send those headers too, so they
/// are read only from a peer named here, and in a chain of addresses only
/// the proxies named here are skipped: the client is the rightmost
/// address that is not one of them (what a client wrote at the left of
/// the chain, before the proxy appended its peer, is never reached).
///
/// `X-Forwarded-For` is read when present (nginx's, HAProxy's, Caddy's and
/// most load balancers' header), `Forwarded` only without it: a proxy that
/// sets only `Forwarded` must drop a client's `X-Forwarded-For`.
package struct TrustedProxies: Sendable {
  /// Each proxy's address, 4 bytes for IPv4 and 16 for IPv6, as the
  /// listener gives a peer's.
  let addresses: Set<[UInt8]>

  /// No proxy: every request is from its peer.
  package static let none = TrustedProxies(addresses: [])

  private init(addresses: Set<[UInt8]>) { self.addresses = addresses }

  package init(_ texts: [String]) throws(ServerError) {
    var addresses: Set<[UInt8]> = []
    for text in texts {
      guard let address = Self.address(text) else {
        throw .usage(
          "--trusted-proxy takes the IP address a proxy connects from, not \(TerminalText.quoted(text))",
          hint: "e.g. --trusted-proxy 127.0.0.1 for nginx on this machine")
      }
      addresses.insert(address)
    }
    self.addresses = addresses
  }

  func trusts(_ peer: [UInt8]) -> Bool { !addresses.isEmpty && addresses.contains(peer) }

  /// Who sent the request: the peer itself, or, from a trusted proxy, the
  /// rightmost address of the forwarding chain that is no trusted proxy.
  /// An entry that is no address (`unknown`, an obfuscated `_name`, a typo)
  /// ends the walk: the client is then the last proxy that spoke.
  func client(peer: [UInt8], headers: [(String, String)]) -> [UInt8] {
    guard trusts(peer) else { return peer }
    var client = peer
    for entry in Self.chain(headers).reversed() {
      guard let address = Self.address(entry) else { break }
      client = address
      if !addresses.contains(address) { break }
    }
    return client
  }

  /// The scheme the client used to reach a trusted proxy (`http` or
  /// `https`, the nearest proxy's word), else nil.
  func scheme(peer: [UInt8], headers: [(String, String)]) -> String? {
    guard trusts(peer) else { return nil }
    var said = headers.filter { $0.0.lowercased() == "x-forwarded-proto" }.flatMap { Self.list($0.1) }
    if said.isEmpty { said = Self.forwarded(headers).compactMap { $0["proto"] } }
    guard let scheme = said.last?.lowercased(), scheme == "http" || scheme == "https" else { return nil }
    return scheme
  }

  /// The forwarding chain, client first: every `X-Forwarded-For` in order,
  /// else each `Forwarded` element's `for=`.
  static func chain(_ headers: [(String, String)]) -> [String] {
    let forwardedFor = headers.filter { $0.0.lowercased() == "x-forwarded-for" }.flatMap { list($0.1) }
    if !forwardedFor.isEmpty { return forwardedFor }
    return forwarded(headers).map { $0["for"] ?? "" }
  }

  /// A comma-separated list's members, trimmed.
  static func list(_ value: String) -> [String] {
    value.split(separator: ",", omittingEmptySubsequences: false).map { String($0.trimmingBlanks) }
  }

  /// `Forwarded`'s elements (RFC 7239), each a map of its lowercase
  /// parameter names to their values unquoted.
  static func forwarded(_ headers: [(String, String)]) -> [[String: String]] {
    var elements: [[String: String]] = []
    for (name, value) in headers where name.lowercased() == "forwarded" {
      var element: [String: String] = [:]
      var pair = ""
      var quoted = false
      func endPair() {
        let parts = pair.split(separator: "=", maxSplits: 1)
        if parts.count == 2 { element[String(parts[0].trimmingBlanks).lowercased()] = String(parts[1].trimmingBlanks) }
        pair = ""
      }
      for character in value {
        switch character {
        case "\"": quoted.toggle()
        case ";" where !quoted: endPair()
        case "," where !quoted:
          endPair()
          elements.append(element)
          element = [:]
        default: pair.append(character)
        }
      }
      endPair()
      elements.append(element)
    }
    return elements
  }

  /// An IP address as bytes: `192.0.2.1`, `2001:db8::1`, `[2001:db8::1]`,
  /// with a port after either (`192.0.2.1:4711`, `[2001:db8::1]:4711`), as
  /// proxies write them; an IPv4-mapped IPv6 address as its IPv4 one.
  static func address(_ text: String) -> [UInt8]? {
    var host = Substring(text)
    if host.hasPrefix("[") {
      guard let close = host.firstIndex(of: "]") else { return nil }
      let rest = host[host.index(after: close)...]
      guard rest.isEmpty || (rest.first == ":" && rest.count > 1 && rest.dropFirst().allSatisfy(\.isASCIIDigit)) else {
        return nil
      }
      host = host[host.index(after: host.startIndex)..<close]
      return ipv6(String(host))
    }
    if let v6 = ipv6(String(host)) { return v6 }
    if let colon = host.firstIndex(of: ":") {
      let port = host[host.index(after: colon)...]
      guard !port.isEmpty, port.allSatisfy(\.isASCIIDigit) else { return nil }
      host = host[..<colon]
    }
    var v4 = in_addr()
    guard inet_pton(AF_INET, String(host), &v4) == 1 else { return nil }
    return withUnsafeBytes(of: v4) { Array($0) }
  }

  private static func ipv6(_ text: String) -> [UInt8]? {
    var bytes = [UInt8](repeating: 0, count: 16)
    guard inet_pton(AF_INET6, text, &bytes) == 1 else { return nil }
    if bytes[..<10].allSatisfy({ $0 == 0 }) && bytes[10] == 0xff && bytes[11] == 0xff { return Array(bytes[12...]) }
    return bytes
  }

  /// An address as text (`192.0.2.1`, `2001:db8::1`), as the request log writes it.
  static func text(_ address: [UInt8]) -> String {
    var text = [CChar](repeating: 0, count: 64)
    let family = address.count == 16 ? AF_INET6 : AF_INET
    address.withUnsafeBytes { _ = inet_ntop(family, $0.baseAddress, &text, 64) }
    return String(decoding: text.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
  }
}

extension Character {
  fileprivate var isASCIIDigit: Bool { isASCII && isNumber }
}

extension StringProtocol {
  fileprivate var trimmingBlanks: SubSequence {
    let start = firstIndex { $0 != " " && $0 != "\t" } ?? endIndex
    let end = lastIndex { $0 != " " && $0 != "\t" }.map(index(after:)) ?? start
    return self[start..<Swift.max(start, end)]
  }
}
