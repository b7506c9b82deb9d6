import Foundation
import MsglogHTTPClient
import MsglogTestSupport
import Testing

/// `https://` through GnuTLS, against Python's `ssl` serving throwaway
/// certificates: a certificate is accepted only when a trusted authority
/// signed it, for the URL's host, and in date; each refusal says which.
@Suite struct HTTPSTests {
  let s = Sandbox()

  private func failure(_ body: () throws -> Void) -> HTTPClientError? {
    do {
      try body()
      return nil
    } catch let error as HTTPClientError {
      return error
    } catch {
      Issue.record("not an HTTPClientError: \(error)")
      return nil
    }
  }

  private static let ok = ScriptedServer.Answer("HTTP/1.1 200 OK\r\nContent-Length: 6\r\n\r\nsecret")

  @Test func theLibraryLoads() throws {
    let version = try TLSLibrary.load()
    #expect(version.hasPrefix("3."), "\(version)")
  }

  /// With the authority's certificate as the CA file: answers of each
  /// framing, on one kept connection, then one to the end of the connection
  /// (ended with close_notify).
  @Test func aServerSignedByTheCAFileIsTrusted() throws {
    let certificates = try TestCertificates(in: s.dir)
    let server = try ScriptedServer(
      s,
      [
        Self.ok, .init("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n3;x=y\r\nabc\r\n0\r\n\r\n"),
        .init("HTTP/1.0 200 OK\r\n\r\nto the end", then: .close),
      ],
      tls: try certificates.server("localhost", for: ["DNS:localhost", "IP:127.0.0.1"]))
    let client = HTTPClient(
      try HTTPURL("https://localhost:\(server.port)"), .init(token: "t0ken", caFile: certificates.authority))
    #expect(try client.send(.get("/api/sync"), limit: 100).text == "secret")
    #expect(try client.send(.get("/api/sync"), limit: 100).text == "abc")
    #expect(try client.send(.get("/api/sync"), limit: 100).text == "to the end")
    #expect(client.connectionsOpened == 1)
    let requests = server.received().compactMap(\.request)
    #expect(requests.count == 3 && requests[0].contains("\r\nAuthorization: Bearer t0ken\r\n"), "\(requests)")
    #expect(requests[0].contains("\r\nHost: localhost:\(server.port)\r\n"))
  }

  /// An address in the URL is checked against the certificate's IP names.
  @Test func anAddressIsCheckedAgainstTheIPNames() throws {
    let certificates = try TestCertificates(in: s.dir)
    let server = try ScriptedServer(
      s, [Self.ok], tls: try certificates.server("both", for: ["DNS:localhost", "IP:127.0.0.1"]))
    let client = HTTPClient(
      try HTTPURL("https://127.0.0.1:\(server.port)"), .init(caFile: certificates.authority))
    #expect(try client.send(.get("/"), limit: 100).text == "secret")
  }

  /// The system's roots do not include a team's own authority: refused
  /// before any byte of the request (or its token) goes out.
  @Test func withoutTheCAFileTheServerIsNotTrusted() throws {
    let certificates = try TestCertificates(in: s.dir)
    let server = try ScriptedServer(
      s, [Self.ok], tls: try certificates.server("localhost", for: ["DNS:localhost"]))
    let client = HTTPClient(try HTTPURL("https://localhost:\(server.port)"), .init(token: "t0ken"))
    let error = failure { _ = try client.send(.get("/"), limit: 100) }
    #expect(error == .tls(origin: "localhost:\(server.port)", .untrusted))
    #expect(error?.description == "the certificate of localhost:\(server.port) is not signed by a trusted authority")
    #expect(server.received().allSatisfy { $0.request == nil }, "\(server.received())")
  }

  @Test func aCertificateForAnotherNameIsRefused() throws {
    let certificates = try TestCertificates(in: s.dir)
    let server = try ScriptedServer(
      s, [Self.ok, Self.ok], tls: try certificates.server("other", for: ["DNS:other.example", "IP:127.0.0.2"]))
    for host in ["localhost", "127.0.0.1"] {
      let client = HTTPClient(try HTTPURL("https://\(host):\(server.port)"), .init(caFile: certificates.authority))
      let error = failure { _ = try client.send(.get("/"), limit: 100) }
      #expect(error == .tls(origin: "\(host):\(server.port)", .wrongName(host: host)))
      #expect(error?.description == "the certificate of \(host):\(server.port) is not for \(host)")
    }
    #expect(server.received().allSatisfy { $0.request == nil })
  }

  @Test func anExpiredCertificateIsRefused() throws {
    let certificates = try TestCertificates(in: s.dir)
    let server = try ScriptedServer(
      s, [Self.ok], tls: try certificates.server("expired", for: ["DNS:localhost"], days: -1))
    let client = HTTPClient(try HTTPURL("https://localhost:\(server.port)"), .init(caFile: certificates.authority))
    let error = failure { _ = try client.send(.get("/"), limit: 100) }
    #expect(error == .tls(origin: "localhost:\(server.port)", .expired))
    #expect(error?.description == "the certificate of localhost:\(server.port) has expired")
  }

  @Test func aCAFileThatCannotBeUsedIsNamed() throws {
    let url = try HTTPURL("https://localhost:1")
    let missing = s.dir + "/missing.pem"
    var error = failure { _ = try HTTPClient(url, .init(caFile: missing)).send(.get("/"), limit: 1) }
    #expect(error == .tls(origin: "localhost:1", .caFile(path: missing, reason: "no such file or directory")))
    #expect(error?.description == "cannot use the CA file \(missing): no such file or directory")
    let notPEM = s.dir + "/not.pem"
    try "not a certificate\n".write(toFile: notPEM, atomically: true, encoding: .utf8)
    error = failure { _ = try HTTPClient(url, .init(caFile: notPEM)).send(.get("/"), limit: 1) }
    guard case .tls(_, .caFile(let path, _)) = error else {
      Issue.record("\(String(describing: error))")
      return
    }
    #expect(path == notPEM)
  }

  /// A body that runs to the end of the connection, cut by a close without
  /// close_notify, may have been truncated by anyone on the path: an error.
  @Test func aCloseDelimitedBodyWithoutCloseNotifyIsCut() throws {
    let certificates = try TestCertificates(in: s.dir)
    let server = try ScriptedServer(
      s, [.init("HTTP/1.0 200 OK\r\n\r\nmaybe the whole", then: .abort)],
      tls: try certificates.server("localhost", for: ["DNS:localhost"]))
    let client = HTTPClient(try HTTPURL("https://localhost:\(server.port)"), .init(caFile: certificates.authority))
    let error = failure { _ = try client.send(.get("/"), limit: 100) }
    #expect(
      error
        == .connectionLost(
          origin: "localhost:\(server.port)",
          reason: "closed the connection without ending TLS: the answer may have been cut"))
  }

  @Test func cancelEndsABlockedTLSRead() throws {
    let certificates = try TestCertificates(in: s.dir)
    let server = try ScriptedServer(
      s, [.init(pieces: [], then: .hang)], tls: try certificates.server("localhost", for: ["DNS:localhost"]))
    let client = HTTPClient(
      try HTTPURL("https://localhost:\(server.port)"), .init(caFile: certificates.authority, idleTimeout: 600))
    let canceller = Thread {
      server.waitForRequests(1)
      client.cancel()
    }
    canceller.start()
    #expect(failure { _ = try client.send(.get("/"), limit: 100) } == .cancelled(origin: "localhost:\(server.port)"))
  }

  /// An https:// URL for a server that speaks plain HTTP fails (never an
  /// answer, never a hang).
  @Test func aPlainServerIsNotTLS() throws {
    let s = Sandbox()
    let server = try ServedLog.running(s)
    defer { _ = server.stop() }
    let client = HTTPClient(try HTTPURL("https://127.0.0.1:\(server.port)"), .init(connectTimeout: 30))
    let error = failure { _ = try client.send(.get("/api/streams"), limit: 1 << 20) }
    switch error {
    case .tls(_, .failed), .connectionLost: break
    default: Issue.record("\(String(describing: error))")
    }
  }
}
