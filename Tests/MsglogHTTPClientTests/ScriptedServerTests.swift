import Foundation
import MsglogHTTPClient
import MsglogTestSupport
import Testing

#if canImport(Glibc)
  import Glibc
#endif

/// The client against answers `msglog serve` never sends, written byte for
/// byte by Servers/scripted_server.py: each framing, each malformation,
/// silence, a connection closed under a kept request.
@Suite struct ScriptedServerTests {
  let s = Sandbox()

  private func client(_ server: ScriptedServer, _ configuration: HTTPClient.Configuration = .init()) throws
    -> HTTPClient
  {
    HTTPClient(try HTTPURL(server.url), configuration)
  }

  /// The error a request ends with (nil when it got its answer).
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

  @Test func theRequestCarriesTheClientsFieldsAndItsBody() throws {
    let server = try ScriptedServer(s, [.init("HTTP/1.1 201 Created\r\nContent-Length: 2\r\n\r\nok")])
    let client = try client(server, .init(token: "s3cret", userAgent: "msglog/1.2.3"))
    let response = try client.send(.post("/api/append", json: Array(#"{"text":"hi"}"#.utf8)), limit: 100)
    #expect(response.status == 201 && response.head.reason == "Created" && response.text == "ok")
    let request = try #require(server.received().first?.request)
    #expect(request.hasPrefix("POST /api/append HTTP/1.1\r\n"), "\(request)")
    for field in [
      "Host: 127.0.0.1:\(server.port)", "User-Agent: msglog/1.2.3", "Authorization: Bearer s3cret",
      "Content-Type: application/json", "Content-Length: 13",
    ] {
      #expect(request.contains("\r\n" + field + "\r\n"), "\(field) in \(request)")
    }
    #expect(request.hasSuffix("\r\n\r\n{\"text\":\"hi\"}"), "\(request)")
  }

  /// Two requests, one connection; an answer without a length is read to
  /// the end of its connection, which is then not kept.
  @Test func keepAliveAndCloseDelimitedBodies() throws {
    let server = try ScriptedServer(
      s,
      [
        .init("HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nfirst"),
        .init("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n6\r\nsecond\r\n0\r\n\r\n"),
        .init("HTTP/1.0 200 OK\r\nContent-Type: text/plain\r\n\r\nthird, to the end", then: .close),
        .init("HTTP/1.1 200 OK\r\nContent-Length: 6\r\n\r\nfourth"),
      ])
    let client = try client(server)
    var bodies: [String] = []
    for _ in 0..<4 { bodies.append(try client.send(.get("/"), limit: 1000).text) }
    #expect(bodies == ["first", "second", "third, to the end", "fourth"])
    #expect(client.connectionsOpened == 2)
    #expect(server.received().map(\.connection) == [1, 1, 1, 2])
  }

  /// A chunked body with extensions and trailers is handed on chunk by
  /// chunk as it arrives: the second chunk is sent only once the test has
  /// read the first.
  @Test func aChunkedBodyIsStreamedAsItArrives() throws {
    let gate = s.dir + "/gate"
    let server = try ScriptedServer(
      s,
      [
        .init(pieces: [
          .init("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n4;name=value\r\nWiki\r\n"),
          .init("5 ; q=\"quoted\"\r\npedia\r\n0\r\nTrailer: x\r\n\r\n", gate: gate),
        ]),
        .init("HTTP/1.1 200 OK\r\nContent-Length: 4\r\n\r\nnext"),
      ])
    let client = try client(server)
    let stream = try client.open(.get("/api/events"))
    #expect(stream.status == 200)
    #expect(try stream.next() == Array("Wiki".utf8))
    ScriptedServer.open(gate)
    #expect(try stream.next() == Array("pedia".utf8))
    #expect(try stream.next() == nil && stream.isFinished)
    #expect(try client.send(.get("/"), limit: 10).text == "next")
    #expect(client.connectionsOpened == 1)
  }

  @Test func interimAnswersAreSkipped() throws {
    let server = try ScriptedServer(
      s,
      [
        .init(
          "HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 103 Early Hints\r\nLink: </a>\r\n\r\n"
            + "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok")
      ])
    let response = try client(server).send(.get("/"), limit: 10)
    #expect(response.status == 200 && response.text == "ok")
  }

  /// A malformed answer is an error naming what is wrong, never a guess.
  @Test(arguments: [
    ("HTTP/1.1 200 OK\r\nContent-Length: 5\r\nContent-Length: 6\r\n\r\nhello", "different Content-Length values"),
    ("HTTP/1.1 200 OK\r\nContent-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n0\r\n\r\n", "both"),
    ("HTTP/1.1 200 OK\nContent-Length: 5\n\nhello", "bare LF"),
    ("SSH-2.0-OpenSSH_9.2\r\n\r\n", "does not begin with an HTTP/1 status line"),
    ("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n", "not a hexadecimal number"),
    ("HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip\r\n\r\n", "other than chunked"),
    ("HTTP/1.1 101 Switching Protocols\r\nUpgrade: x\r\n\r\n", "switched protocols"),
  ])
  func malformedAnswers(_ answer: String, _ reason: String) throws {
    let server = try ScriptedServer(s, [.init(answer, then: .close)])
    let error = failure { _ = try client(server).send(.get("/"), limit: 100) }
    guard case .malformedAnswer(let origin, let found) = error else {
      Issue.record("\(String(describing: error))")
      return
    }
    #expect(origin == "127.0.0.1:\(server.port)" && found.contains(reason), "\(found)")
    #expect(error!.description.hasPrefix("127.0.0.1:\(server.port) sent a malformed answer: "))
  }

  @Test func answersCutShortAreLostConnectionsAndLongOnesAreRefused() throws {
    let server = try ScriptedServer(
      s,
      [
        .init("HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\nonly ten b", then: .close),
        .init("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhel", then: .close),
        .init("HTTP/1.1 200 OK\r\nContent-Le", then: .close),
        .init("HTTP/1.1 200 OK\r\nContent-Length: 1000\r\n\r\n" + String(repeating: "x", count: 1000)),
        .init("", then: .close),
      ])
    let client = try client(server)
    var error = failure { _ = try client.send(.get("/a"), limit: 1000) }
    #expect(
      error
        == .connectionLost(
          origin: "127.0.0.1:\(server.port)",
          reason: "closed the connection before the end of the answer (90 bytes short)"))
    error = failure { _ = try client.send(.get("/b"), limit: 1000) }
    #expect(error?.description.contains("in its chunked body") == true, "\(String(describing: error))")
    error = failure { _ = try client.send(.get("/c"), limit: 1000) }
    #expect(error?.description.contains("in the middle of the answer's head") == true, "\(String(describing: error))")
    error = failure { _ = try client.send(.get("/d"), limit: 999) }
    #expect(error == .answerTooLarge(origin: "127.0.0.1:\(server.port)", limit: 999))
    #expect(error?.description == "the answer from 127.0.0.1:\(server.port) is longer than 999 bytes")
    error = failure { _ = try client.send(.get("/e"), limit: 1000) }
    #expect(error?.description == "127.0.0.1:\(server.port) closed the connection without answering")
  }

  /// A kept connection the server closed as the next request went out: a
  /// GET is sent again on a new connection, a POST is not (it may have
  /// been done), unless the caller says it may.
  @Test func aStaleKeptConnectionRetriesOnlyWhatMayBeRepeated() throws {
    let ok = ScriptedServer.Answer("HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok")
    let silentClose = ScriptedServer.Answer(pieces: [], then: .close)
    let server = try ScriptedServer(s, [ok, silentClose, ok, silentClose, ok, silentClose, ok])
    let client = try client(server)
    #expect(try client.send(.get("/1"), limit: 10).text == "ok")
    #expect(try client.send(.get("/2"), limit: 10).text == "ok")
    let post = HTTPRequest.post("/3", json: Array("{}".utf8))
    let error = failure { _ = try client.send(post, limit: 10) }
    #expect(error?.description == "127.0.0.1:\(server.port) closed the connection without answering")
    #expect(try client.send(.get("/4"), limit: 10).text == "ok")
    let repeatable = HTTPRequest.post("/5", json: Array("{}".utf8), retriesOnStaleConnection: true)
    #expect(try client.send(repeatable, limit: 10).text == "ok")
    let paths = server.received().compactMap { $0.request?.split(separator: " ").dropFirst().first }
    #expect(paths == ["/1", "/2", "/2", "/3", "/4", "/5", "/5"], "\(paths)")
    #expect(server.received().map(\.connection) == [1, 1, 2, 2, 3, 3, 4])
  }

  @Test func aServerThatNeverAnswersTimesOut() throws {
    let server = try ScriptedServer(s, [.init(pieces: [], then: .hang)])
    let client = try client(server, .init(idleTimeout: 0.3))
    let error = failure { _ = try client.send(.get("/"), limit: 10) }
    #expect(error == .timedOut(origin: "127.0.0.1:\(server.port)", phase: .answer, seconds: 0.3))
    #expect(error?.description == "127.0.0.1:\(server.port) sent nothing for 0.3 s")
  }

  /// A server that trickles — a byte of the body, or an interim `100
  /// Continue`, every 0.1 s, well within the idle timeout — is cut off at
  /// the exchange's bound.
  @Test(arguments: [
    ("HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\n", " "), ("", "HTTP/1.1 100 Continue\r\n\r\n"),
  ])
  func aTricklingServerIsCutOffAtTheExchangesBound(head: String, drop: String) throws {
    let pieces = [ScriptedServer.Answer.Piece(head)] + (0..<60).map { _ in .init(drop, delay: 100) }
    let server = try ScriptedServer(s, [.init(pieces: pieces, then: .hang)])
    let client = try client(server, .init(idleTimeout: 5))
    var request = HTTPRequest.get("/")
    request.exchangeTimeout = 0.5
    let error = failure { _ = try client.send(request, limit: 1000) }
    #expect(error == .timedOut(origin: "127.0.0.1:\(server.port)", phase: .exchange, seconds: 0.5))
    #expect(error?.description == "127.0.0.1:\(server.port) did not answer whole within 0.5 s")
  }

  /// `cancel()` from another thread ends a wait for an answer that would
  /// never come, and every request after it.
  @Test func cancelEndsABlockedRequestFromAnotherThread() throws {
    let server = try ScriptedServer(s, [.init(pieces: [], then: .hang)])
    let client = try client(server, .init(idleTimeout: 600))
    let canceller = Thread {
      server.waitForRequests(1)
      client.cancel()
    }
    canceller.start()
    let error = failure { _ = try client.send(.get("/"), limit: 10) }
    #expect(error == .cancelled(origin: "127.0.0.1:\(server.port)"))
    #expect(failure { _ = try client.send(.get("/"), limit: 10) } == .cancelled(origin: "127.0.0.1:\(server.port)"))
    #expect(server.received().count == 1)
  }

  @Test func aRefusedConnectionIsUnreachable() throws {
    // A port nothing listens on: bound, then closed.
    let probe = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_addr.s_addr = inet_addr("127.0.0.1")
    var size = socklen_t(MemoryLayout<sockaddr_in>.size)
    withUnsafeMutablePointer(to: &address) {
      $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
        _ = bind(probe, $0, size)
        _ = getsockname(probe, $0, &size)
      }
    }
    let port = UInt16(bigEndian: address.sin_port)
    close(probe)
    let client = HTTPClient(try HTTPURL("http://127.0.0.1:\(port)"))
    let error = failure { _ = try client.send(.get("/"), limit: 10) }
    #expect(error == .unreachable(origin: "127.0.0.1:\(port)", reason: "connection refused"))
    #expect(error?.description == "cannot reach 127.0.0.1:\(port): connection refused")
  }

  /// A listener whose queue is full never completes a connection: the
  /// connect timeout ends the wait, and so does `cancel()`.
  @Test func aConnectionThatNeverCompletesTimesOutOrIsCancelled() throws {
    let listener = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    defer { close(listener) }
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_addr.s_addr = inet_addr("127.0.0.1")
    var size = socklen_t(MemoryLayout<sockaddr_in>.size)
    withUnsafeMutablePointer(to: &address) {
      $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
        _ = bind(listener, $0, size)
        _ = getsockname(listener, $0, &size)
      }
    }
    listen(listener, 0)
    let port = UInt16(bigEndian: address.sin_port)
    // Fill the queue: these connections are never accepted.
    let fillers = (0..<2).map { _ in PendingConnection(port: port) }
    defer { _ = fillers }
    let url = try HTTPURL("http://127.0.0.1:\(port)")
    let client = HTTPClient(url, .init(connectTimeout: 0.3))
    let error = failure { _ = try client.send(.get("/"), limit: 10) }
    #expect(error == .timedOut(origin: "127.0.0.1:\(port)", phase: .connect, seconds: 0.3))
    #expect(error?.description == "cannot reach 127.0.0.1:\(port): no connection within 0.3 s")
    let patient = HTTPClient(url, .init(connectTimeout: 600))
    // Cancelled while this thread waits for the connection (in poll).
    let connecting = currentThreadID() ?? -1
    let canceller = Thread {
      waitUntilThreads { isBlockedInPoll(thread: connecting) }
      patient.cancel()
    }
    canceller.start()
    #expect(failure { _ = try patient.send(.get("/"), limit: 10) } == .cancelled(origin: "127.0.0.1:\(port)"))
  }

  /// `localhost` and `[::1]`: a name's addresses are tried in turn, and
  /// an IPv6 literal is connected as one.
  @Test func namesAndIPv6Addresses() throws {
    let v4 = try ScriptedServer(s, [.init("HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nv4")])
    #expect(try HTTPClient(try HTTPURL("http://localhost:\(v4.port)")).send(.get("/"), limit: 10).text == "v4")
    let v6 = try ScriptedServer(s, [.init("HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nv6")], ipv6: true)
    let client = HTTPClient(try HTTPURL("http://[::1]:\(v6.port)"))
    #expect(try client.send(.get("/"), limit: 10).text == "v6")
    #expect(v6.received().first?.request?.contains("\r\nHost: [::1]:\(v6.port)\r\n") == true)
  }
}

/// A non-blocking connection attempt left pending (to fill a listen queue).
private final class PendingConnection {
  let descriptor: Int32

  init(port: UInt16) {
    descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_NONBLOCK.rawValue), 0)
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_port = port.bigEndian
    address.sin_addr.s_addr = inet_addr("127.0.0.1")
    _ = withUnsafePointer(to: &address) {
      $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
        connect(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
      }
    }
  }

  deinit { close(descriptor) }
}
