import CLibPQ
import MsglogCore

/// A PostgreSQL URL: the text libpq is given, and what msglog shows of it.
///
/// What is shown is rebuilt from libpq's own parse of the URL (PQconninfoParse),
/// field by field, leaving out every field libpq marks as secret (`password`,
/// `sslpassword`): whatever libpq takes for a password — in the user part,
/// as a query keyword, percent-encoded (`?%70assword=`) — is therefore never
/// shown, and nothing is guessed by matching text. A URL libpq would read
/// differently from what its author meant (an unencoded `@` or `/` in a
/// password) is refused before anything connects.
package struct PostgresLocation: Sendable, Equatable {
  /// The URL as libpq reads it, its scheme in lower case. It may hold a password: never shown.
  let conninfo: String
  /// The URL without its secrets, for every message.
  package let shown: String

  /// The two schemes libpq knows, in any case (`POSTGRES://` too).
  static let schemes = ["postgresql://", "postgres://"]

  /// Whether `location` names a PostgreSQL database (by its scheme, in any case).
  package static func isPostgres(_ location: String) -> Bool { scheme(of: location) != nil }

  /// The scheme `location` starts with, in lower case.
  static func scheme(of location: String) -> String? {
    let head = location.utf8.prefix(schemes[0].utf8.count)
    return schemes.first { scheme in
      head.count >= scheme.utf8.count
        && zip(head, scheme.utf8).allSatisfy { lowercased($0) == $1 }
    }
  }

  private static func lowercased(_ byte: UInt8) -> UInt8 {
    byte >= UInt8(ascii: "A") && byte <= UInt8(ascii: "Z") ? byte + 32 : byte
  }

  /// Parses `location` with libpq (loading it first).
  ///
  /// - Throws: `MsglogError.cannotConnect` when libpq cannot be loaded or
  ///   cannot parse the URL, or when the URL holds an `@` where libpq reads a
  ///   host or database name; the error shows no part of the URL but its scheme.
  package init(_ location: String) throws(MsglogError) {
    guard let scheme = Self.scheme(of: location) else {
      preconditionFailure("not a PostgreSQL URL (check isPostgres first)")
    }
    // libpq recognises its schemes in lower case only, and reads anything
    // else as "keyword=value" pairs, quoting the whole text (password and
    // all) when that fails.
    let conninfo = scheme + String(decoding: location.utf8.dropFirst(scheme.utf8.count), as: UTF8.self)
    let unnamed = scheme + "…"
    do {
      try LibPQ.load()
    } catch {
      throw .cannotConnect(location: unnamed, reason: error.message)
    }
    guard !Self.hasStrayAt(conninfo, afterScheme: scheme) else {
      throw .cannotConnect(
        location: unnamed,
        reason:
          "the URL has an '@' where libpq reads a host or database name; percent-encode '@' as %40 and '/' as %2F in a user name or password"
      )
    }
    var failure: UnsafeMutablePointer<CChar>? = nil
    guard let options = PQconninfoParse(conninfo, &failure) else {
      let reason = failure.map { String(cString: $0) } ?? "out of memory"
      if let failure { PQfreemem(failure) }
      throw .cannotConnect(location: unnamed, reason: "libpq cannot parse the URL (\(Self.unquoted(reason)))")
    }
    defer { PQconninfoFree(options) }
    var fields: [(keyword: String, value: String)] = []
    var option = options
    while let keyword = option.pointee.keyword {
      defer { option += 1 }
      guard let value = option.pointee.val else { continue }
      // libpq's own mark for a field whose value is to be hidden.
      if let display = option.pointee.dispchar, display.pointee == CChar(UInt8(ascii: "*")) { continue }
      fields.append((String(cString: keyword), String(cString: value)))
    }
    self.conninfo = conninfo
    self.shown = Self.url(scheme: scheme, fields)
  }

  /// Whether an `@` stands where libpq reads hosts, ports or the database
  /// name. libpq takes the user part to end at the first `@` before any
  /// `/`; a second `@`, or one after a `/`, means that an unencoded `@` or
  /// `/` in a password moved part of it into the host or database name,
  /// which messages would then show. (A database name with an `@` is
  /// written `%40`.)
  static func hasStrayAt(_ conninfo: String, afterScheme scheme: String) -> Bool {
    let rest = conninfo.utf8.dropFirst(scheme.utf8.count)
    var hosts = rest[...]
    if let end = rest.firstIndex(where: { $0 == UInt8(ascii: "@") || $0 == UInt8(ascii: "/") }),
      rest[end] == UInt8(ascii: "@")
    {
      hosts = rest[rest.index(after: end)...]
    }
    let beforeQuery = hosts.prefix { $0 != UInt8(ascii: "?") }
    return beforeQuery.contains(UInt8(ascii: "@"))
  }

  /// libpq's parse error without what it quotes from the URL (which may be
  /// part of a password): `invalid percent-encoded token: "…"` → `invalid
  /// percent-encoded token`. libpq puts the piece last; a quoted single
  /// character (`"="`) is its own words and stays; anything else quoted ends
  /// the message there, wherever it stands.
  static func unquoted(_ message: String) -> String {
    var text = Substring(message.split(whereSeparator: \.isNewline).first ?? "")
    if let quote = text.ranges(of: ": \"").last { text = text[..<quote.lowerBound] }
    var scan = text.startIndex
    while let open = text[scan...].firstIndex(of: "\"") {
      let inside = text[text.index(after: open)...]
      guard let close = inside.firstIndex(of: "\""), inside[..<close].count == 1 else {
        text = text[..<open]
        break
      }
      scan = text.index(after: close)
    }
    while let last = text.last, last == " " || last == ":" { text = text.dropLast() }
    return String(text)
  }

  /// `scheme://user@host:port,host:port/dbname?keyword=value&…` from libpq's fields.
  static func url(scheme: String, _ fields: [(keyword: String, value: String)]) -> String {
    var byName: [String: String] = [:]
    for (keyword, value) in fields { byName[keyword] = value }
    var out = scheme
    if let user = byName["user"] { out += encoded(user) + "@" }
    var query: [(String, String)] = []
    let hosts = byName["host"].map { $0.split(separator: ",", omittingEmptySubsequences: false).map(String.init) } ?? []
    let ports = byName["port"].map { $0.split(separator: ",", omittingEmptySubsequences: false).map(String.init) } ?? []
    // Hosts in the authority where they can stand there as they are (a
    // socket directory such as /tmp cannot); otherwise in the query.
    let inAuthority =
      !hosts.isEmpty && hosts.allSatisfy { !$0.isEmpty && !$0.hasPrefix("/") && !$0.hasPrefix("@") }
      && (ports.isEmpty || ports.count == hosts.count || ports.count == 1)
    if inAuthority {
      out += hosts.enumerated().map { n, host in
        var text = host.contains(":") ? "[" + host + "]" : encoded(host)
        let port = ports.count == hosts.count ? ports[n] : (n == hosts.count - 1 ? ports.first : nil)
        if let port, !port.isEmpty { text += ":" + encoded(port) }
        return text
      }.joined(separator: ",")
    } else {
      if let host = byName["host"] { query.append(("host", host)) }
      if let port = byName["port"] { query.append(("port", port)) }
    }
    if let dbname = byName["dbname"] { out += "/" + encoded(dbname) }
    for (keyword, value) in fields where !["user", "host", "port", "dbname"].contains(keyword) {
      query.append((keyword, value))
    }
    if !query.isEmpty {
      out += "?" + query.map { encoded($0.0) + "=" + encoded($0.1, keeping: "/:,") }.joined(separator: "&")
    }
    return out
  }

  /// Percent-encodes all but RFC 3986's unreserved characters and `keeping`
  /// (libpq decodes every field).
  static func encoded(_ text: String, keeping: String = "") -> String {
    var out = ""
    for byte in text.utf8 {
      switch byte {
      case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"),
        UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"),
        UInt8(ascii: "~"):
        out.unicodeScalars.append(Unicode.Scalar(byte))
      case _ where keeping.utf8.contains(byte):
        out.unicodeScalars.append(Unicode.Scalar(byte))
      default:
        let hex = Array("0123456789ABCDEF".utf8)
        out += "%" + String(decoding: [hex[Int(byte >> 4)], hex[Int(byte & 15)]], as: UTF8.self)
      }
    }
    return out
  }
}
