import Foundation
import MsglogHTTPClient
import MsglogTestSupport
import Synchronization
import Testing

/// The client against the real `msglog serve`, for what any correct
/// server does (its HTTP engine may change): a JSON GET, a POST, a streamed
/// answer read piece by piece, an event stream with a commit arriving while
/// it is open, and a blocked follow cancelled from another thread.
@Suite(.serialized) struct ServeClientTests {
  @Test func aJSONGetAndAPostOnOneKeptConnection() throws {
    let s = Sandbox()
    s.append("first", sender: "ann")
    let server = try ServedLog.running(s)
    defer { #expect(server.stop().code == 0) }
    let client = HTTPClient(try HTTPURL(server.url!))
    let streams = try client.send(.get("/api/streams", accept: "application/json"), limit: 1 << 20)
    #expect(streams.status == 200 && streams.head.value(of: "content-type")?.hasPrefix("application/json") == true)
    #expect(streams.text + "\n" == s.run(["streams", "--json"]).stdout, "\(streams.text)")
    let appended = try client.send(
      .post("/api/append", json: Array(#"{"stream":"main","text":"second","sender":"bob"}"#.utf8)), limit: 1 << 20)
    #expect(appended.status == 200 && appended.text.contains(#""seq":2"#), "\(appended.text)")
    let log = s.run(["log", "--json"]).lines
    #expect(log.count == 2 && log[1].contains(#""text":"second","sender":"bob""#), "\(log)")
    // A refusal is an answer, not an error: the caller reads its status and body.
    let refused = try client.send(.post("/api/move", json: Array(#"{"from":0,"to":5}"#.utf8)), limit: 1 << 20)
    #expect(
      refused.status == 400 || refused.status == 409 || refused.status == 422, "\(refused.status) \(refused.text)")
    #expect(client.connectionsOpened == 1)
  }

  @Test func theTokenIsSentAsABearer() throws {
    let s = Sandbox()
    s.append("first")
    let server = try ServedLog.running(s, ["--token", "s3cret-token-0123456789abcdef"])
    defer { _ = server.stop() }
    let without = try HTTPClient(try HTTPURL(server.url!)).send(.get("/api/streams"), limit: 1 << 20)
    #expect(without.status == 401, "\(without.status)")
    let with = try HTTPClient(try HTTPURL(server.url!), .init(token: "s3cret-token-0123456789abcdef"))
      .send(.get("/api/streams"), limit: 1 << 20)
    #expect(with.status == 200, "\(with.status) \(with.text)")
  }

  /// `/api/events` of 3,000 events, read as it arrives: the pieces are the
  /// answer exactly, in more than one piece.
  @Test func aLongAnswerIsReadPieceByPiece() throws {
    let s = Sandbox()
    let lines = (1...3000).map { "message number \($0) with some text to make it longer" }.joined(separator: "\n")
    #expect(s.run(["append", "--lines"], stdin: Data(lines.utf8)).code == 0)
    let server = try ServedLog.running(s)
    defer { _ = server.stop() }
    let client = HTTPClient(try HTTPURL(server.url!))
    let stream = try client.open(.get("/api/events?from=1&limit=100000"))
    #expect(stream.status == 200)
    var pieces: [[UInt8]] = []
    while let piece = try stream.next() {
      #expect(!piece.isEmpty && piece.count <= 65_536)
      pieces.append(piece)
    }
    #expect(pieces.count > 1)
    #expect(String(decoding: pieces.joined(), as: UTF8.self) == s.run(["log", "--json"]).stdout)
    // Read to its end, the connection carries the next request.
    #expect(try client.send(.get("/api/streams"), limit: 1 << 20).status == 200)
    #expect(client.connectionsOpened == 1)
  }

  /// `/api/follow` from the next seq: events committed while the stream is
  /// open arrive as events, one by one, with their seq as the id.
  @Test func followReadsEventsAsTheyCommit() throws {
    let s = Sandbox()
    s.append("first")
    let server = try ServedLog.running(s)
    defer { _ = server.stop() }
    let client = HTTPClient(try HTTPURL(server.url!), .init(idleTimeout: 60))
    let stream = try client.open(.get("/api/follow?stream=main&from=2", accept: "text/event-stream"))
    #expect(stream.status == 200 && stream.head.value(of: "content-type")?.hasPrefix("text/event-stream") == true)
    let events = ServerSentEventReader(stream)
    s.append("second")
    let second = try #require(try events.next())
    #expect(second.id == "2" && second.data.contains(#""text":"second""#), "\(second)")
    s.append("third")
    let third = try #require(try events.next())
    #expect(third.id == "3" && third.data.contains(#""text":"third""#), "\(third)")
    #expect(events.lastEventID == "3")
    stream.close()
  }

  /// A follow waiting for an event that never comes ends at once when
  /// another thread cancels the client (a `sync --follow` told to stop).
  @Test func cancelEndsABlockedFollow() throws {
    let s = Sandbox()
    s.append("first")
    let server = try ServedLog.running(s)
    defer { _ = server.stop() }
    let client = HTTPClient(try HTTPURL(server.url!), .init(idleTimeout: 600))
    let stream = try client.open(.get("/api/follow?stream=main"))
    nonisolated(unsafe) let events = ServerSentEventReader(stream)
    let ended = DispatchSemaphore(value: 0)
    nonisolated(unsafe) var outcome: Result<ServerSentEvent?, any Error>? = nil
    let reader = Mutex<pid_t?>(nil)
    let follower = Thread {
      reader.withLock { $0 = currentThreadID() ?? -1 }
      outcome = Result { try events.next() }
      ended.signal()
    }
    follower.start()
    // Cancelled while it is blocked in its read (in poll, as the kernel says).
    #expect(waitUntilThreads { reader.withLock { $0 }.map { isBlockedInPoll(thread: $0) } ?? false })
    client.cancel()
    // A watchdog, not a measurement: a cancel that did not work would wait 600 s.
    #expect(ended.wait(timeout: .now() + 60) == .success)
    guard case .failure(let error) = outcome else {
      Issue.record("the follow ended with \(String(describing: outcome))")
      return
    }
    #expect(error as? HTTPClientError == .cancelled(origin: "127.0.0.1:\(server.port)"))
  }
}
