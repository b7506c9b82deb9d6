import Msglog

#if canImport(Glibc)
  import Glibc
#endif

/// `--listen ADDR:PORT`: an IPv4 address, `[IPv6]`, or `localhost`, and a
/// port (0 lets the system choose; the server prints the one it got).
package struct ListenAddress: Equatable {
  package enum Host: Equatable {
    case v4(in_addr_t)
    case v6([UInt8])
  }

  package var host: Host
  package var port: UInt16
  package var text: String

  package init(parsing text: String) throws(ServerError) {
    self.text = text
    let hint = "give ADDR:PORT, e.g. 127.0.0.1:8080, [::1]:8080 or 0.0.0.0:8080"
    guard let colon = text.lastIndex(of: ":") else {
      throw .usage("invalid address \(TerminalText.quoted(text)): no port", hint: hint)
    }
    var name = String(text[..<colon])
    let portText = String(text[text.index(after: colon)...])
    guard let port = UInt16(portText), portText.allSatisfy(\.isASCII) else {
      throw .usage("invalid port \(TerminalText.quoted(portText)) (0 to 65535)", hint: hint)
    }
    self.port = port
    if name == "localhost" { name = "127.0.0.1" }
    if name.hasPrefix("[") && name.hasSuffix("]") {
      var bytes = [UInt8](repeating: 0, count: 16)
      guard inet_pton(AF_INET6, String(name.dropFirst().dropLast()), &bytes) == 1 else {
        throw .usage("invalid IPv6 address \(TerminalText.quoted(name))", hint: hint)
      }
      host = .v6(bytes)
    } else {
      var address = in_addr()
      guard inet_pton(AF_INET, name, &address) == 1 else {
        throw .usage("invalid address \(TerminalText.quoted(name))", hint: hint)
      }
      host = .v4(address.s_addr)
    }
  }

  /// The host as written (`127.0.0.1`, `[::1]`, `localhost`), for `Host` checks.
  package var hostText: String { String(text[..<text.lastIndex(of: ":")!]) }

  /// A wildcard (`0.0.0.0`, `[::]`): every address of this machine.
  package var isWildcard: Bool {
    switch host {
    case .v4(let address): return address == 0
    case .v6(let bytes): return bytes.allSatisfy { $0 == 0 }
    }
  }

  /// Whether only this machine can connect (127.0.0.0/8 or ::1).
  package var isLoopback: Bool {
    switch host {
    case .v4(let address): return UInt32(bigEndian: address) >> 24 == 127
    case .v6(let bytes): return bytes == [UInt8](repeating: 0, count: 15) + [1]
    }
  }

  /// The URL a browser opens, with the port actually bound.
  package func url(port bound: UInt16) -> String {
    var name = String(text[..<text.lastIndex(of: ":")!])
    if name == "0.0.0.0" { name = "127.0.0.1" }
    if name == "[::]" { name = "[::1]" }
    return "http://\(name):\(bound)/"
  }

  package func withSockaddr<R>(_ body: (UnsafePointer<sockaddr>, Bool) -> R) -> R {
    switch host {
    case .v4(let address):
      var socket = sockaddr_in()
      socket.sin_family = sa_family_t(AF_INET)
      socket.sin_port = port.bigEndian
      socket.sin_addr.s_addr = address
      return withUnsafePointer(to: &socket) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { body($0, false) } }
    case .v6(let bytes):
      var socket = sockaddr_in6()
      socket.sin6_family = sa_family_t(AF_INET6)
      socket.sin6_port = port.bigEndian
      withUnsafeMutableBytes(of: &socket.sin6_addr) { $0.copyBytes(from: bytes) }
      return withUnsafePointer(to: &socket) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { body($0, true) } }
    }
  }
}
