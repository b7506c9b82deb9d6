import Foundation
import MsglogHTTPClient
import MsglogTestSupport
import Testing

/// `https://` through GnuTLS, against Python's `ssl` serving throwaway
/// certificates: a certificate is accepted only when a trusted authority
/// signed it, for the URL's host, and in date; each refusal says which.
/// Each test runs with GnuTLS in this process (`relayed` false) and through
/// the msglog-tls helper, as a static executable speaks TLS (true).
@Suite struct HTTPSTests {
  let s = Sandbox()

  /// The helper, built beside the binaries the tests run.
  static let helper = URL(fileURLWithPath: Sandbox.binary).deletingLastPathComponent()
    .appendingPathComponent("msglog-tls").path

  private func configuration(
    _ relayed: Bool, token: String? = nil, caFile: String? = nil, connectTimeout: Double = 10,
    idleTimeout: Double = 30
  ) -> HTTPClient.Configuration {
    .init(
      token: token, caFile: caFile, connectTimeout: connectTimeout, idleTimeout: idleTimeout,
      tlsHelper: relayed ? Self.helper : nil, relaysTLS: relayed)
  }

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
  @Test(arguments: [false, true]) func aServerSignedByTheCAFileIsTrusted(_ relayed: Bool) throws {
    let certificates = try TestCertificates(in: s.dir)
    let server = try ScriptedServer(
      s,
      [
        Self.ok, .init("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n3;x=y\r\nabc\r\n0\r\n\r\n"),
        .init("HTTP/1.0 200 OK\r\n\r\nto the end", then: .close),
      ],
      tls: try certificates.server("localhost", for: ["DNS:localhost", "IP:127.0.0.1"]))
    let client = HTTPClient(
      try HTTPURL("https://localhost:\(server.port)"),
      configuration(relayed, token: "t0ken", caFile: certificates.authority))
    #expect(try client.send(.get("/api/sync"), limit: 100).text == "secret")
    #expect(try client.send(.get("/api/sync"), limit: 100).text == "abc")
    #expect(try client.send(.get("/api/sync"), limit: 100).text == "to the end")
    #expect(client.connectionsOpened == 1)
    let requests = server.received().compactMap(\.request)
    #expect(requests.count == 3 && requests[0].contains("\r\nAuthorization: Bearer t0ken\r\n"), "\(requests)")
    #expect(requests[0].contains("\r\nHost: localhost:\(server.port)\r\n"))
  }

  /// An address in the URL is checked against the certificate's IP names.
  @Test(arguments: [false, true]) func anAddressIsCheckedAgainstTheIPNames(_ relayed: Bool) throws {
    let certificates = try TestCertificates(in: s.dir)
    let server = try ScriptedServer(
      s, [Self.ok], tls: try certificates.server("both", for: ["DNS:localhost", "IP:127.0.0.1"]))
    let client = HTTPClient(
      try HTTPURL("https://127.0.0.1:\(server.port)"), configuration(relayed, caFile: certificates.authority))
    #expect(try client.send(.get("/"), limit: 100).text == "secret")
  }

  /// The system's roots do not include a team's own authority: refused
  /// before any byte of the request (or its token) goes out.
  @Test(arguments: [false, true]) func withoutTheCAFileTheServerIsNotTrusted(_ relayed: Bool) throws {
    let certificates = try TestCertificates(in: s.dir)
    let server = try ScriptedServer(
      s, [Self.ok], tls: try certificates.server("localhost", for: ["DNS:localhost"]))
    let client = HTTPClient(try HTTPURL("https://localhost:\(server.port)"), configuration(relayed, token: "t0ken"))
    let error = failure { _ = try client.send(.get("/"), limit: 100) }
    #expect(error == .tls(origin: "localhost:\(server.port)", .untrusted))
    #expect(error?.description == "the certificate of localhost:\(server.port) is not signed by a trusted authority")
    #expect(server.received().allSatisfy { $0.request == nil }, "\(server.received())")
  }

  @Test(arguments: [false, true]) func aCertificateForAnotherNameIsRefused(_ relayed: Bool) throws {
    let certificates = try TestCertificates(in: s.dir)
    let server = try ScriptedServer(
      s, [Self.ok, Self.ok], tls: try certificates.server("other", for: ["DNS:other.example", "IP:127.0.0.2"]))
    for host in ["localhost", "127.0.0.1"] {
      let client = HTTPClient(
        try HTTPURL("https://\(host):\(server.port)"), configuration(relayed, caFile: certificates.authority))
      let error = failure { _ = try client.send(.get("/"), limit: 100) }
      #expect(error == .tls(origin: "\(host):\(server.port)", .wrongName(host: host)))
      #expect(error?.description == "the certificate of \(host):\(server.port) is not for \(host)")
    }
    #expect(server.received().allSatisfy { $0.request == nil })
  }

  @Test(arguments: [false, true]) func anExpiredCertificateIsRefused(_ relayed: Bool) throws {
    let certificates = try TestCertificates(in: s.dir)
    let server = try ScriptedServer(
      s, [Self.ok], tls: try certificates.server("expired", for: ["DNS:localhost"], days: -1))
    let client = HTTPClient(
      try HTTPURL("https://localhost:\(server.port)"), configuration(relayed, caFile: certificates.authority))
    let error = failure { _ = try client.send(.get("/"), limit: 100) }
    #expect(error == .tls(origin: "localhost:\(server.port)", .expired))
    #expect(error?.description == "the certificate of localhost:\(server.port) has expired")
  }

  @Test(arguments: [false, true]) func aCAFileThatCannotBeUsedIsNamed(_ relayed: Bool) throws {
    let url = try HTTPURL("https://localhost:1")
    let missing = s.dir + "/missing.pem"
    var error = failure { _ = try HTTPClient(url, configuration(relayed, caFile: missing)).send(.get("/"), limit: 1) }
    #expect(error == .tls(origin: "localhost:1", .caFile(path: missing, reason: "no such file or directory")))
    #expect(error?.description == "cannot use the CA file \(missing): no such file or directory")
    let notPEM = s.dir + "/not.pem"
    try "not a certificate\n".write(toFile: notPEM, atomically: true, encoding: .utf8)
    error = failure { _ = try HTTPClient(url, configuration(relayed, caFile: notPEM)).send(.get("/"), limit: 1) }
    guard case .tls(_, .caFile(let path, _)) = error else {
      Issue.record("\(String(describing: error))")
      return
    }
    #expect(path == notPEM)
  }

  /// A body that runs to the end of the connection, cut by a close without
  /// close_notify, may have been truncated by anyone on the path: an error.
  @Test(arguments: [false, true]) func aCloseDelimitedBodyWithoutCloseNotifyIsCut(_ relayed: Bool) throws {
    let certificates = try TestCertificates(in: s.dir)
    let server = try ScriptedServer(
      s, [.init("HTTP/1.0 200 OK\r\n\r\nmaybe the whole", then: .abort)],
      tls: try certificates.server("localhost", for: ["DNS:localhost"]))
    let client = HTTPClient(
      try HTTPURL("https://localhost:\(server.port)"), configuration(relayed, caFile: certificates.authority))
    let error = failure { _ = try client.send(.get("/"), limit: 100) }
    #expect(
      error
        == .connectionLost(
          origin: "localhost:\(server.port)",
          reason: "closed the connection without ending TLS: the answer may have been cut"))
  }

  @Test(arguments: [false, true]) func cancelEndsABlockedTLSRead(_ relayed: Bool) throws {
    let certificates = try TestCertificates(in: s.dir)
    let server = try ScriptedServer(
      s, [.init(pieces: [], then: .hang)], tls: try certificates.server("localhost", for: ["DNS:localhost"]))
    let client = HTTPClient(
      try HTTPURL("https://localhost:\(server.port)"),
      configuration(relayed, caFile: certificates.authority, idleTimeout: 600))
    let canceller = Thread {
      server.waitForRequests(1)
      client.cancel()
    }
    canceller.start()
    #expect(failure { _ = try client.send(.get("/"), limit: 100) } == .cancelled(origin: "localhost:\(server.port)"))
  }

  /// An https:// URL for a server that speaks plain HTTP fails (never an
  /// answer, never a hang).
  @Test(arguments: [false, true]) func aPlainServerIsNotTLS(_ relayed: Bool) throws {
    let s = Sandbox()
    let server = try ServedLog.running(s)
    defer { _ = server.stop() }
    let client = HTTPClient(try HTTPURL("https://127.0.0.1:\(server.port)"), configuration(relayed, connectTimeout: 30))
    let error = failure { _ = try client.send(.get("/api/streams"), limit: 1 << 20) }
    switch error {
    case .tls(_, .failed), .connectionLost: break
    default: Issue.record("\(String(describing: error))")
    }
  }

  /// A static executable (as msglog is) cannot run GnuTLS: it speaks TLS
  /// through msglog-tls beside it, verifying as the client does, with its
  /// connection kept for the next request.
  @Test func aStaticExecutableSpeaksTLSThroughItsHelper() throws {
    let certificates = try TestCertificates(in: s.dir)
    let server = try ScriptedServer(
      s, [Self.ok, Self.ok, Self.ok], tls: try certificates.server("localhost", for: ["DNS:localhost"]))
    let probe = URL(fileURLWithPath: Self.helper).deletingLastPathComponent()
      .appendingPathComponent("msglog-tls-probe").path
    let url = "https://localhost:\(server.port)"
    let run = runProgram(probe, [url, certificates.authority])
    #expect(run.code == 0, "\(run)")
    #expect(run.stdout == "in process: false\n200 secret\n200 secret\nconnections: 1\n", "\(run)")
    let refused = runProgram(probe, [url])
    #expect(refused.code == 1, "\(refused)")
    #expect(
      refused.stdout.hasSuffix(
        "msglog: the certificate of localhost:\(server.port) is not signed by a trusted authority\n"),
      "\(refused)")
    // Every helper ends with its connection (a watchdog, not a measurement;
    // an ended helper whose parent has exited may stay a zombie here).
    let helpers = "ps -eo stat=,args= | grep -v '^Z' | grep -q '[m]sglog-tls relay https://localhost:\(server.port)'"
    var waited = 0
    while shell(helpers) == 0, waited < 500 {
      usleep(10_000)
      waited += 1
    }
    #expect(shell(helpers) != 0)
  }
}
