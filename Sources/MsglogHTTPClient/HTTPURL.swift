#if canImport(Glibc)
  import Glibc
#endif

/// An `http://` or `https://` address of a server, checked whole before any
/// connection is made (RFC 3986's syntax, the parts HTTP uses).
///
/// It never holds credentials: a URL with userinfo (`user:password@`) is
/// refused, since a token travels in `Authorization`, never in a URL that
/// ends up in shell histories and messages; and the refusal does not repeat
/// them. The fragment (`#…`) is dropped, as a client never sends it.
package struct HTTPURL: Sendable, Equatable, Hashable, CustomStringConvertible {
  package enum Scheme: String, Sendable {
    case http, https

    var defaultPort: UInt16 { self == .http ? 80 : 443 }
  }

  package enum Host: Sendable, Equatable, Hashable {
    /// A name for `getaddrinfo`, in lowercase.
    case name(String)
    case ipv4(String)
    /// Without its brackets.
    case ipv6(String)
  }

  package let scheme: Scheme
  package let host: Host
  package let port: UInt16
  /// Begins with `/`; `/` when the URL has none. Every request's path is
  /// appended to it (a server behind a reverse proxy at `/msglog`).
  package let path: String
  /// Without its `?`; nil when there is none.
  package let query: String?

  /// Parses `text`; throws `HTTPClientError.invalidURL` with the reason.
  package init(_ text: String) throws {
    func refuse(_ reason: String) -> HTTPClientError {
      .invalidURL("the URL \(HTTPURL.redacting(text)) \(reason)")
    }
    guard let separator = text.firstRange(of: "://") else {
      throw refuse("is not an http:// or https:// URL")
    }
    guard let scheme = Scheme(rawValue: text[..<separator.lowerBound].lowercased()) else {
      throw refuse("is not an http:// or https:// URL")
    }
    var rest = text[separator.upperBound...]
    if let hash = rest.firstIndex(of: "#") { rest = rest[..<hash] }
    let authorityEnd = rest.firstIndex { $0 == "/" || $0 == "?" } ?? rest.endIndex
    let authority = rest[..<authorityEnd]
    guard !authority.contains("@") else {
      throw refuse("holds credentials: give a token another way (Authorization: Bearer), never in the URL")
    }
    // host, then an optional :port
    let hostText: Substring
    var portText: Substring? = nil
    if authority.hasPrefix("[") {
      guard let close = authority.firstIndex(of: "]") else { throw refuse("has a '[' without its ']'") }
      hostText = authority[authority.index(after: authority.startIndex)..<close]
      let after = authority[authority.index(after: close)...]
      if !after.isEmpty {
        guard after.first == ":" else { throw refuse("has something after its ']' that is not a port") }
        portText = after.dropFirst()
      }
      guard !hostText.contains("%") else { throw refuse("names an IPv6 zone, which is not supported") }
      guard Self.isAddress(String(hostText), family: AF_INET6) else {
        throw refuse("has a malformed IPv6 address")
      }
      host = .ipv6(hostText.lowercased())
    } else {
      if let colon = authority.lastIndex(of: ":") {
        hostText = authority[..<colon]
        portText = authority[authority.index(after: colon)...]
      } else {
        hostText = authority
      }
      guard !hostText.isEmpty else { throw refuse("has no host") }
      guard hostText.utf8.allSatisfy({ Self.hostNameBytes.contains($0) }) else {
        throw refuse("has a host with a character a host name cannot have (a name beyond ASCII must be punycode)")
      }
      if hostText.utf8.allSatisfy({ $0 == UInt8(ascii: ".") || (0x30...0x39).contains($0) }) {
        guard Self.isAddress(String(hostText), family: AF_INET) else { throw refuse("has a malformed IPv4 address") }
        host = .ipv4(String(hostText))
      } else {
        let labels = hostText.split(separator: ".", omittingEmptySubsequences: false)
        let named = labels.enumerated().allSatisfy { index, label in
          (1...63).contains(label.utf8.count) || (label.isEmpty && index == labels.count - 1 && index > 0)
        }
        guard named, hostText.utf8.count <= 253, !hostText.hasPrefix("-") else {
          throw refuse("has a malformed host name")
        }
        host = .name(hostText.lowercased())
      }
    }
    if let portText, !portText.isEmpty {
      guard portText.utf8.count <= 5, portText.utf8.allSatisfy({ (0x30...0x39).contains($0) }),
        let number = Int(portText), (1...65_535).contains(number)
      else { throw refuse("has a port that is not a number from 1 to 65535") }
      port = UInt16(number)
    } else {
      port = scheme.defaultPort
    }
    let target = rest[authorityEnd...]
    let queryStart = target.firstIndex(of: "?")
    let pathText = target[..<(queryStart ?? target.endIndex)]
    guard Self.isEncoded(pathText, allowing: Self.pathBytes) else {
      throw refuse("has a character in its path that must be percent-encoded")
    }
    path = pathText.isEmpty ? "/" : String(pathText)
    if let queryStart {
      let queryText = target[target.index(after: queryStart)...]
      guard Self.isEncoded(queryText, allowing: Self.queryBytes) else {
        throw refuse("has a character in its query that must be percent-encoded")
      }
      query = String(queryText)
    } else {
      query = nil
    }
    self.scheme = scheme
  }

  /// The server as messages name it: `host:port`, `[v6]:port`.
  package var origin: String { hostForHeader + ":" + String(port) }

  /// The host as `Host` carries it, and a URL shows it: an IPv6 address in brackets.
  var hostForHeader: String {
    switch host {
    case .name(let name): return name
    case .ipv4(let address): return address
    case .ipv6(let address): return "[" + address + "]"
    }
  }

  /// The host as `getaddrinfo` and the certificate check take it.
  var hostForLookup: String {
    switch host {
    case .name(let name): return name
    case .ipv4(let address), .ipv6(let address): return address
    }
  }

  /// The `Host` header's value: the port only when it is not the scheme's own.
  var hostHeader: String { port == scheme.defaultPort ? hostForHeader : origin }

  /// The URL again, normalized: scheme and host in lowercase, the port
  /// only when it is not the default.
  package var description: String {
    scheme.rawValue + "://" + hostHeader + (path == "/" && query == nil ? "" : path) + (query.map { "?" + $0 } ?? "")
  }

  /// The request target for `relative` (a path from `/`, with its query):
  /// this URL's path, then `relative`.
  func target(_ relative: String) -> String {
    path == "/" ? relative : (path.hasSuffix("/") ? String(path.dropLast()) : path) + relative
  }

  /// `text` with any userinfo removed (`https://u:p@h/x` → `https://h/x`),
  /// for a message about a URL that may not even parse.
  package static func redacting(_ text: String) -> String {
    guard let separator = text.firstRange(of: "://") else { return text }
    let rest = text[separator.upperBound...]
    let authorityEnd = rest.firstIndex { $0 == "/" || $0 == "?" || $0 == "#" } ?? rest.endIndex
    guard let at = rest[..<authorityEnd].lastIndex(of: "@") else { return text }
    let kept = rest[rest.index(after: at)...]
    return String(text[..<separator.upperBound]) + String(kept)
  }

  // MARK: - Character classes (RFC 3986)

  private static let unreserved: Set<UInt8> = Set(
    Array(UInt8(ascii: "a")...UInt8(ascii: "z")) + Array(UInt8(ascii: "A")...UInt8(ascii: "Z"))
      + Array(UInt8(ascii: "0")...UInt8(ascii: "9")) + Array("-._~".utf8))
  private static let subDelimiters = Set("!$&'()*+,;=".utf8)
  private static let pathBytes = unreserved.union(subDelimiters).union(":@/".utf8)
  private static let queryBytes = pathBytes.union("?".utf8)
  /// A registered name as DNS has them (and `_`, which some internal names use).
  private static let hostNameBytes = unreserved.subtracting("~".utf8).union("_".utf8)

  private static func isEncoded(_ text: Substring, allowing allowed: Set<UInt8>) -> Bool {
    let bytes = Array(text.utf8)
    var index = 0
    while index < bytes.count {
      if bytes[index] == UInt8(ascii: "%") {
        guard index + 2 < bytes.count, isHexDigit(bytes[index + 1]), isHexDigit(bytes[index + 2]) else {
          return false
        }
        index += 3
      } else {
        guard allowed.contains(bytes[index]) else { return false }
        index += 1
      }
    }
    return true
  }

  private static func isHexDigit(_ byte: UInt8) -> Bool {
    (0x30...0x39).contains(byte) || (0x41...0x46).contains(byte) || (0x61...0x66).contains(byte)
  }

  private static func isAddress(_ text: String, family: Int32) -> Bool {
    var storage = in6_addr()
    return inet_pton(family, text, &storage) == 1
  }
}
