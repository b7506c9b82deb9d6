import Foundation
import Testing

#if canImport(Glibc)
  import Glibc
#endif

/// docs/SERVER.md's reverse proxy, run as the document writes it: its
/// `serve` command (marked `proxy:serve`) and nginx with TLS in front
/// (`proxy:nginx`), with only `substitutions` put in for the test's own
/// port, certificate and binary. People reach it at `origin`
/// (`https://chat.example.org:PORT`, resolved to 127.0.0.1 by `curl`'s
/// options and the browser's flags).
public final class DocumentedProxy {
  public static let document = "docs/SERVER.md"
  public static let host = "chat.example.org"
  public let server: ServedLog
  public let nginx: Nginx
  /// nginx's HTTPS port.
  public let https: UInt16
  public let certificate: String
  public var origin: String { "https://\(Self.host):\(https)" }
  /// curl's options to reach `origin`: the certificate trusted, the name resolved.
  public var curl: [String] { ["--cacert", certificate, "--resolve", "\(Self.host):\(https):127.0.0.1"] }

  /// Starts both; `arguments` go after the document's `serve` command,
  /// `descriptors` limits serve's (`ulimit -n`).
  public init(_ s: Sandbox, arguments: [String] = [], descriptors: Int? = nil) throws {
    let blocks = DocumentBlock.marked("proxy", in: Self.document)
    try #require(
      blocks.map { "\($0.language) \($0.label)" } == ["nginx nginx", "sh serve"],
      "\(Self.document)'s proxy blocks are not the ones this test runs: \(blocks)")
    try #require(Nginx.isInstalled, "nginx is not installed at \(Nginx.binary): scripts/setup --test installs it")
    (certificate, _) = try Nginx.certificate(for: Self.host, in: s.dir)
    https = Self.freePort()
    let origin = "https://\(Self.host):\(https)"
    // The command, with serve on a port of its own (the document's 8080 may be taken).
    let command = blocks[1].text.replacing("https://\(Self.host)", with: origin)
      .replacing("127.0.0.1:8080", with: "127.0.0.1:0")
    let words = command.split(whereSeparator: \.isWhitespace).map(String.init)
    try #require(
      words.count > 4 && words[0] == "msglog" && words[1] == "serve" && words[2] == "--listen",
      "the document's serve command: \(command)")
    server = ServedLog(s, Array(words[4...]) + arguments, listen: words[3], descriptors: descriptors)
    guard server.url != nil else {
      let run = server.stop()
      throw DocumentedProxyError.serveDidNotStart(run)
    }
    let config = [
      ("listen 443 ssl", "listen 127.0.0.1:\(https) ssl"),
      ("/etc/ssl/certs/\(Self.host).pem", s.dir + "/\(Self.host).pem"),
      ("/etc/ssl/private/\(Self.host).key", s.dir + "/\(Self.host).key"),
      ("127.0.0.1:8080", "127.0.0.1:\(server.port)"),
    ].reduce(blocks[0].text) { $0.replacing($1.0, with: $1.1) }
    nginx = try Nginx(config: config, in: s)
    do {
      try nginx.waitUntilServing(origin + "/livez", curl: curl)
    } catch {
      nginx.stop()
      _ = server.stop()
      throw error
    }
  }

  /// Stops nginx, then serve: what serve printed (its request log).
  public func stop() -> Run {
    nginx.stop()
    return server.stop()
  }

  /// A port no one listens on now (bound and released).
  public static func freePort() -> UInt16 {
    let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    defer { close(fd) }
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_addr.s_addr = inet_addr("127.0.0.1")
    var length = socklen_t(MemoryLayout<sockaddr_in>.size)
    _ = withUnsafeMutablePointer(to: &address) { pointer in
      pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { sockaddr in
        bind(fd, sockaddr, length)
        return getsockname(fd, sockaddr, &length)
      }
    }
    return UInt16(bigEndian: address.sin_port)
  }
}

public enum DocumentedProxyError: Error {
  case serveDidNotStart(Run)
}
