import Foundation
import MsglogLoopback
import MsglogTestSupport
import Testing

#if canImport(Glibc)
  import Glibc
#endif

/// `msglog serve` against what a hostile local process or an overloaded
/// proxy sends (issue 24, SPEC "Serving heavy and hostile traffic"): real
/// binary, raw sockets. Each test failed on the libmicrohttpd server.
@Suite(.serialized) struct ServeHostileTrafficTests {
  static func raw(_ server: ServedLog, _ request: String, seconds: Double = 5) -> (
    status: Int, text: String, closed: Bool
  ) {
    LoopbackSocket.exchange(port: server.port, request, seconds: seconds)
  }

  static func status(_ text: String) -> Int { text.hasPrefix("HTTP/1.") ? Int(text.dropFirst(9).prefix(3)) ?? 0 : 0 }

  /// The header fields of an answer, names in lowercase.
  static func headers(_ text: String) -> [String: String] {
    let head = text.components(separatedBy: "\r\n\r\n")[0]
    var fields: [String: String] = [:]
    for line in head.split(separator: "\r\n").dropFirst() {
      guard let colon = line.firstIndex(of: ":") else { continue }
      fields[line[..<colon].lowercased()] = line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
    }
    return fields
  }

  /// An answer that is the server's own: JSON `{"error":…}` with the security headers.
  static func expectOwnError(_ text: String, _ status: Int, _ what: String) {
    let fields = headers(text)
    #expect(Self.status(text) == status, "\(what): \(text.prefix(300))")
    #expect(fields["content-type"] == "application/json", "\(what): \(fields)")
    #expect(fields["x-content-type-options"] == "nosniff", "\(what): \(fields)")
    #expect(fields["content-security-policy"]?.contains("frame-ancestors 'none'") == true, "\(what): \(fields)")
    #expect(text.contains(#"{"error":""#), "\(what): \(text.prefix(300))")
  }

  /// Each head sent alone (the body never comes) gets its refusal — the
  /// server's own error, never `100 Continue` — and the connection closes.
  static func expectRefusedBeforeTheBody(_ cases: [(String, String, Int)], by server: ServedLog) throws {
    for (what, head, status) in cases {
      let socket = try #require(LoopbackSocket(port: server.port))
      socket.send(head)
      let answer = socket.receive(seconds: 5, until: LoopbackSocket.isWholeAnswer)
      expectOwnError(answer.text, status, what)
      #expect(!answer.text.contains("100 Continue"), "\(what): \(answer.text)")
      let end = socket.receive(seconds: 3)
      #expect(answer.closed || end.closed, "\(what): the connection stays open")
    }
  }

  // MARK: - Item 3: bodies

  /// What the head decides is answered before any body byte is read, and
  /// the connection closed: a declared length over the limit (413, and
  /// never `100 Continue` for it), a missing token (401), a foreign origin
  /// or content type (403), an unknown route (404), a wrong method (405).
  @Test func refusalsComeBeforeTheBody() throws {
    let s = Sandbox()
    s.append("x")
    let token = "0123456789abcdef0123"
    let server = try ServedLog.running(s, listen: "0.0.0.0:0", environment: ["MSGLOG_TOKEN": token])
    defer { #expect(server.stop().code == 0) }
    let host = "Host: 127.0.0.1:\(server.port)\r\n"
    let auth = "Authorization: Bearer \(token)\r\n"
    let json = "Content-Type: application/json\r\n"
    let cases: [(String, String, Int)] = [
      ("50 MB declared", "POST /api/append HTTP/1.1\r\n\(host)\(auth)\(json)Content-Length: 50000000\r\n\r\n", 413),
      (
        "50 MB declared, 100-continue",
        "POST /api/append HTTP/1.1\r\n\(host)\(auth)\(json)Expect: 100-continue\r\nContent-Length: 50000000\r\n\r\n",
        413
      ),
      ("no token", "POST /api/append HTTP/1.1\r\n\(host)\(json)Content-Length: 1000\r\n\r\n", 401),
      (
        "a foreign origin",
        "POST /api/append HTTP/1.1\r\n\(host)\(auth)\(json)Origin: http://evil.example\r\nContent-Length: 1000\r\n\r\n",
        403
      ),
      (
        "text/plain",
        "POST /api/append HTTP/1.1\r\n\(host)\(auth)Content-Type: text/plain\r\nContent-Length: 1000\r\n\r\n", 403
      ),
      ("no such route", "POST /api/nothing HTTP/1.1\r\n\(host)\(auth)\(json)Content-Length: 1000\r\n\r\n", 404),
      ("a wrong method", "PUT /api/append HTTP/1.1\r\n\(host)\(auth)\(json)Content-Length: 1000\r\n\r\n", 405),
      ("chunked, no token", "POST /api/append HTTP/1.1\r\n\(host)\(json)Transfer-Encoding: chunked\r\n\r\n", 401),
      (
        "a wrong token, 100-continue",
        "POST /api/append HTTP/1.1\r\n\(host)Authorization: Bearer not-the-token\r\n\(json)Expect: 100-continue\r\nContent-Length: 1000\r\n\r\n",
        401
      ),
    ]
    try Self.expectRefusedBeforeTheBody(cases, by: server)
    // An accepted body with 100-continue gets the go-ahead, then its answer.
    let body = #"{"text":"after continue"}"#
    let socket = try #require(LoopbackSocket(port: server.port))
    socket.send(
      "POST /api/append HTTP/1.1\r\n\(host)\(auth)\(json)Expect: 100-continue\r\nContent-Length: \(body.utf8.count)\r\n\r\n"
    )
    let go = socket.receive(seconds: 5, until: { $0.contains("\r\n\r\n") })
    #expect(go.text.hasPrefix("HTTP/1.1 100 Continue\r\n\r\n"), "\(go.text)")
    socket.send(body)
    let done = socket.receive(seconds: 5, until: { $0.contains(#""seq":2"#) })
    #expect(done.text.contains("HTTP/1.1 200 OK"), "\(done.text)")
  }

  /// With named tokens, who sent a body is known before it is read: the
  /// token is looked up first (on a worker), and a wrong one is refused
  /// with no `100 Continue` and no share of
  /// the bodies' budget — an attacker's 60 trickled bodies with a made-up
  /// token held it all, and every write got a 503. A good token's body is
  /// read after its lookup, and so is one that arrived with its head.
  @Test func aNamedTokenIsLookedUpBeforeTheBody() throws {
    let s = Sandbox()
    s.append("x")
    let writer = s.run("token", "add", "ann", "--write", "*").stdout.trimmingCharacters(in: .whitespacesAndNewlines)
    #expect(!writer.isEmpty)
    let server = try ServedLog.running(s)
    defer { #expect(server.stop().code == 0) }
    let host = "Host: 127.0.0.1:\(server.port)\r\n"
    let json = "Content-Type: application/json\r\n"
    func head(_ token: String, _ framing: String) -> String {
      "POST /api/append HTTP/1.1\r\n\(host)Authorization: Bearer \(token)\r\n\(json)Expect: 100-continue\r\n\(framing)\r\n"
    }
    let cases: [(String, String, Int)] = [
      ("a made-up token", head("not-a-token", "Content-Length: 1000\r\n"), 401),
      ("a made-up token, chunked", head("not-a-token", "Transfer-Encoding: chunked\r\n"), 401),
    ]
    try Self.expectRefusedBeforeTheBody(cases, by: server)
    let body = #"{"text":"after the lookup"}"#
    let socket = try #require(LoopbackSocket(port: server.port))
    socket.send(head(writer, "Content-Length: \(body.utf8.count)\r\n"))
    let go = socket.receive(seconds: 5, until: { $0.contains("\r\n\r\n") })
    #expect(go.text.hasPrefix("HTTP/1.1 100 Continue\r\n\r\n"), "\(go.text)")
    socket.send(body)
    let done = socket.receive(seconds: 5, until: { $0.contains(#""seq":2"#) })
    #expect(done.text.contains("HTTP/1.1 200 OK"), "\(done.text)")
    // The body sent with its head, then another request on the same connection.
    let again = #"{"text":"with its head"}"#
    let whole = try #require(LoopbackSocket(port: server.port))
    whole.send(
      "POST /api/append HTTP/1.1\r\n\(host)Authorization: Bearer \(writer)\r\n\(json)Content-Length: \(again.utf8.count)\r\n\r\n\(again)"
        + "GET /api/items HTTP/1.1\r\n\(host)Authorization: Bearer \(writer)\r\n\r\n")
    let both = whole.receive(seconds: 5, until: { $0.contains("with its head") && $0.contains("after the lookup") })
    #expect(both.text.hasPrefix("HTTP/1.1 200 OK") && both.text.contains(#""seq":3"#), "\(both.text)")
    // A client that sends its whole request and ends its side (`nc -N`)
    // while the token is looked up still gets its answer.
    let ended = #"{"text":"then the client ended its side"}"#
    let halfClosed = try #require(LoopbackSocket(port: server.port))
    halfClosed.send(
      "POST /api/append HTTP/1.1\r\n\(host)Authorization: Bearer \(writer)\r\n\(json)Content-Length: \(ended.utf8.count)\r\n\r\n\(ended)"
    )
    shutdown(halfClosed.fd, Int32(SHUT_WR))
    let answer = halfClosed.receive(seconds: 5, until: LoopbackSocket.isWholeAnswer)
    #expect(answer.text.hasPrefix("HTTP/1.1 200 OK") && answer.text.contains(#""seq":4"#), "\(answer.text)")
    #expect(s.run("list").lines.count == 4)
  }

  /// A body must arrive whole within 10 s (a deadline, not an idle
  /// timeout): one trickled a byte a second, and an endless chunked one,
  /// get a 408 and a close long before they would end.
  @Test func slowAndEndlessBodiesAreCutOff() throws {
    let s = Sandbox()
    let server = try ServedLog.running(s)
    defer { #expect(server.stop().code == 0) }
    let head = "POST /api/append HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
    let trickled = #"{"text":""# + String(repeating: "t", count: 60) + #""}"#
    let bodies: [(String, String, () -> [UInt8])] = [
      ("trickled", head + "Content-Length: \(trickled.utf8.count)\r\n\r\n", { [UInt8(ascii: "t")] }),
      ("endless chunked", head + "Transfer-Encoding: chunked\r\n\r\n", { Array("1\r\nx\r\n".utf8) }),
    ]
    for (what, start, piece) in bodies {
      let socket = try #require(LoopbackSocket(port: server.port))
      socket.send(start)
      let began = Date()
      var answer = ""
      var closed = false
      // A piece a second for up to 40 s; the deadline is 10 s.
      for _ in 0..<40 where answer.isEmpty && !closed {
        if !socket.send(piece()) { closed = true }
        let got = socket.receive(seconds: 1, until: LoopbackSocket.isWholeAnswer)
        answer += got.text
        closed = closed || got.closed
      }
      let seconds = Date().timeIntervalSince(began)
      print("serve: a \(what) body was answered after \(String(format: "%.1f", seconds)) s: \(answer.prefix(12))")
      Self.expectOwnError(answer, 408, what)
    }
    #expect(!s.run(["log", "--all"]).stdout.contains("ttttt"))
  }

  /// 200 connections each sending all but 10 bytes of the largest body:
  /// the bodies held at once are bounded server-wide (the others are
  /// answered 503 before their body is read), so memory is too.
  @Test func bodiesInMemoryAreBoundedServerWide() throws {
    let s = Sandbox()
    s.append("x")
    let server = try ServedLog.running(s)
    defer {
      let stopped = server.stop()
      #expect(stopped.code == 0, "\(stopped)")
    }
    let before = try ServeSafetyTests.memory(of: server.pid).rss
    let declared = 1_114_102
    let body = [UInt8](repeating: UInt8(ascii: "a"), count: declared - 10)
    let head = Array(
      "POST /api/append HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: \(declared)\r\n\r\n"
        .utf8)
    var sockets: [LoopbackSocket] = []
    var refused = 0
    for _ in 0..<200 {
      guard let socket = LoopbackSocket(port: server.port) else { continue }
      socket.send(head)
      sockets.append(socket)
    }
    // Send what each will take, round after round, until no socket takes more.
    var sent = [Int](repeating: 0, count: sockets.count)
    var progress = true
    var rounds = 0
    while progress && rounds < 2000 {
      progress = false
      rounds += 1
      for (i, socket) in sockets.enumerated() where sent[i] < body.count {
        let n = socket.sendAvailable(Array(body[sent[i]..<min(body.count, sent[i] + 262_144)]))
        if n > 0 {
          sent[i] += n
          progress = true
        }
      }
    }
    // The peak counts once the server has read all the clients sent.
    #expect(SocketQueues.waitUntilServerReadAll(port: server.port), "the server left bytes unread")
    let peak = try ServeSafetyTests.memory(of: server.pid)
    for socket in sockets {
      let answer = socket.receive(seconds: 0.05, until: LoopbackSocket.isWholeAnswer)
      if Self.status(answer.text) == 503 {
        Self.expectOwnError(answer.text, 503, "a body past the budget")
        refused += 1
      }
    }
    let growth = max(peak.rss, peak.peak) - before
    print("serve: 200 bodies of 1 MiB all but 10 bytes: RSS growth \(growth >> 20) MiB, \(refused) answered 503")
    #expect(growth < 128 << 20, "RSS grew by \(growth >> 20) MiB")
    #expect(refused > 0)
    sockets.removeAll()
    #expect(server.request("GET", "/api/streams").status == 200)
  }

  // MARK: - Item 7: every answer is the server's own

  /// What the HTTP library used to answer with its own HTML page or a
  /// silent close is answered in JSON with the security headers; HEAD
  /// says what GET would; an absolute-form target is served; unknown
  /// query parameters are refused.
  @Test func everyAnswerIsTheServersOwn() throws {
    let s = Sandbox()
    s.append("x")
    let server = try ServedLog.running(s)
    defer { #expect(server.stop().code == 0) }
    let host = "Host: 127.0.0.1:\(server.port)\r\n"
    let parameters = (0..<600).map { "a\($0)=1" }.joined(separator: "&")
    let cases: [(String, String, Int)] = [
      ("600 parameters on /", "GET /?\(parameters) HTTP/1.1\r\n\(host)Connection: close\r\n\r\n", 400),
      ("600 parameters on the API", "GET /api/items?\(parameters) HTTP/1.1\r\n\(host)Connection: close\r\n\r\n", 400),
      ("an unknown parameter", "GET /api/items?Stream=inp HTTP/1.1\r\n\(host)Connection: close\r\n\r\n", 400),
      ("a long target", "GET /api/items?stream=\(String(repeating: "s", count: 10_000)) HTTP/1.1\r\n\(host)\r\n", 414),
      (
        "a big header", "GET /api/items HTTP/1.1\r\n\(host)X-Big: \(String(repeating: "b", count: 20_000))\r\n\r\n", 431
      ),
      (
        "a 100 KB chunk extension",
        "POST /api/append HTTP/1.1\r\n\(host)Content-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n1;\(String(repeating: "e", count: 100_000))\r\nx\r\n0\r\n\r\n",
        400
      ),
      ("HTTP/2.0", "GET /api/items HTTP/2.0\r\n\(host)\r\n", 505),
    ]
    for (what, request, status) in cases {
      let r = Self.raw(server, request)
      Self.expectOwnError(r.text, status, what)
    }
    #expect(Self.raw(server, "GET /?stream=main&view=board HTTP/1.1\r\n\(host)Connection: close\r\n\r\n").status == 200)
    // HEAD: the headers GET sends, without the body.
    for path in ["/api/items", "/api/events", "/api/follow", "/api/diff?from=0&to=1", "/api/streams", "/"] {
      let get = Self.raw(
        server, "GET \(path) HTTP/1.1\r\n\(host)Connection: close\r\n\r\n", seconds: path == "/api/follow" ? 1 : 5)
      let head = Self.raw(server, "HEAD \(path) HTTP/1.1\r\n\(host)Connection: close\r\n\r\n")
      let getFields = Self.headers(get.text)
      let headFields = Self.headers(head.text)
      #expect(head.status == 200 && head.text.hasSuffix("\r\n\r\n"), "HEAD \(path): \(head.text)")
      #expect(
        headFields["content-length"] == getFields["content-length"], "HEAD \(path): \(head.text) GET: \(getFields)")
      #expect(headFields["transfer-encoding"] == getFields["transfer-encoding"], "HEAD \(path): \(head.text)")
      #expect(headFields["content-type"] == getFields["content-type"], "HEAD \(path): \(head.text)")
    }
    // Absolute form, for the server's own host: served; for another: refused.
    let absolute = Self.raw(
      server, "GET http://127.0.0.1:\(server.port)/api/streams HTTP/1.1\r\n\(host)Connection: close\r\n\r\n")
    #expect(absolute.status == 200 && absolute.text.contains(#""stream":"main""#), "\(absolute.text)")
    let foreign = Self.raw(server, "GET http://evil.example/api/streams HTTP/1.1\r\n\(host)Connection: close\r\n\r\n")
    #expect(foreign.status == 403, "\(foreign.text)")
  }

  /// Pipelined requests — here 2,000 in one write — are answered in
  /// order, each once.
  @Test func pipelinedRequestsAreAnsweredInOrder() throws {
    let s = Sandbox()
    s.append("x")
    let server = try ServedLog.running(s)
    defer { #expect(server.stop().code == 0) }
    var requests = ""
    for n in 0..<2000 {
      requests +=
        n % 2 == 0
        ? "GET /api/events?limit=\(n % 500 + 1) HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n"
        : "GET /api/streams HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n"
    }
    requests += "GET /api/streams HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n"
    let socket = try #require(LoopbackSocket(port: server.port))
    socket.send(requests)
    let answers = socket.receive(seconds: 60, until: { $0.components(separatedBy: "HTTP/1.1 ").count > 2001 })
    let statuses = answers.text.components(separatedBy: "HTTP/1.1 ").dropFirst().map { String($0.prefix(3)) }
    #expect(statuses.count == 2001, "\(statuses.count) answers")
    #expect(statuses == Array(repeating: "200", count: 2001), "\(Set(statuses))")
  }

  /// A request refused by its line and headers ends its connection, with
  /// a body or without: what was pipelined after it — here an append — is
  /// never read as a request (SPEC "Serving heavy and hostile traffic").
  /// A helper's attack found the append behind a refused bodyless request
  /// (401, 403, 404, 405, 400) run and its text in the list.
  @Test func aRefusedRequestEndsItsConnection() throws {
    let s = Sandbox()
    s.append("x")
    let token = "0123456789abcdef0123"
    let server = try ServedLog.running(s, environment: ["MSGLOG_TOKEN": token])
    defer { #expect(server.stop().code == 0) }
    let auth = "Authorization: Bearer \(token)\r\n"
    let refused: [(String, String, Int)] = [
      ("no token", "GET /api/streams HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n", 401),
      ("no such route", "GET /nope HTTP/1.1\r\nHost: 127.0.0.1\r\n\(auth)\r\n", 404),
      ("a wrong method", "PUT /api/streams HTTP/1.1\r\nHost: 127.0.0.1\r\n\(auth)\r\n", 405),
      ("a foreign host", "GET /api/streams HTTP/1.1\r\nHost: evil.example\r\n\(auth)\r\n", 403),
      ("an encoded slash", "GET /api%2Fstreams HTTP/1.1\r\nHost: 127.0.0.1\r\n\(auth)\r\n", 400),
      ("a doubled parameter", "GET /api/items?stream=a&stream=b HTTP/1.1\r\nHost: 127.0.0.1\r\n\(auth)\r\n", 400),
      (
        "text/plain, no body",
        "POST /api/append HTTP/1.1\r\nHost: 127.0.0.1\r\n\(auth)Content-Type: text/plain\r\nContent-Length: 0\r\n\r\n",
        403
      ),
    ]
    /// Each head with an append pipelined behind it: refused, and the
    /// connection closed with the one answer.
    func expectEachEndsItsConnection(_ cases: [(String, String, Int)], smuggling text: String) {
      for (n, (what, head, status)) in cases.enumerated() {
        let body = #"{"text":"\#(text) \#(n)"}"#
        let append =
          "POST /api/append HTTP/1.1\r\nHost: 127.0.0.1\r\n\(auth)Content-Type: application/json\r\n"
          + "Content-Length: \(body.utf8.count)\r\n\r\n\(body)"
        let answer = Self.raw(server, head + append)
        #expect(answer.status == status, "\(what): \(answer.text.prefix(300))")
        #expect(answer.closed, "\(what): the connection stays open")
        #expect(answer.text.components(separatedBy: "HTTP/1.1 ").count == 2, "\(what): \(answer.text)")
      }
    }
    expectEachEndsItsConnection(refused, smuggling: "smuggled")
    // Refusals a worker decides, the token looked up in the log: a named
    // token's scope (403) and a token the log does not hold (401).
    let ann = s.run(["token", "add", "ann", "--read", "main"]).stdout.trimmingCharacters(in: .newlines)
    let lookedUp: [(String, String, Int)] = [
      (
        "a scope", "GET /api/items?stream=other HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer \(ann)\r\n\r\n",
        403
      ),
      (
        "an unknown named token",
        "GET /api/streams HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer msglog_0123456789abcdef_\(String(repeating: "0", count: 64))\r\n\r\n",
        401
      ),
    ]
    expectEachEndsItsConnection(lookedUp, smuggling: "smuggled behind a lookup")
    #expect(!s.run("list").stdout.contains("smuggled"), "\(s.run("list").stdout)")
  }

  // MARK: - Item 6: the store goes away

  /// The database directory removed, or replaced by another database,
  /// while serving: writes answer 503, and nothing is acknowledged into a
  /// deleted file.
  @Test func aRemovedOrReplacedDatabaseRefusesWrites() throws {
    let s = Sandbox()
    s.append("first")
    let server = try ServedLog.running(s)
    defer { #expect(server.stop().code == 0) }
    #expect(server.request("POST", "/api/append", #"{"text":"before"}"#).status == 200)
    try FileManager.default.removeItem(atPath: s.db)
    var r = server.request("POST", "/api/append", #"{"text":"into the void"}"#)
    #expect(r.status == 503 && r.body.contains(#"{"error":"#), "\(r)")
    // Another database made at the same path: not the one the server has open.
    s.append("the CLI's")
    r = server.request("POST", "/api/append", #"{"text":"into the wrong one"}"#)
    #expect(r.status == 503, "\(r)")
    let log = s.run(["log", "--all"]).stdout
    #expect(!log.contains("into the") && log.contains("the CLI's"), "\(log)")
  }
}
