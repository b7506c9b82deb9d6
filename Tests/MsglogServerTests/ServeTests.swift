import Foundation
import MsglogLoopback
import MsglogTestSupport
import Testing

/// `msglog serve` over real HTTP (curl against the running server).
@Suite(.serialized) struct ServeTests {
  @Test(arguments: Store.allCases) func theAPIAnswersInTheShapesOfJSONOutput(_ store: Store) throws {
    let s = Sandbox(store)
    s.append("first", sender: "ann")
    let server = try ServedLog.running(s)
    defer { #expect(server.stop().code == 0) }
    func call(_ method: String, _ path: String, _ body: String? = nil) -> ServedLog.Reply {
      server.request(method, path, body)
    }
    var r = call("POST", "/api/append", #"{"stream":"main","text":"second","sender":"bob"}"#)
    #expect(r.status == 200 && r.body.contains(#""version":2"#) && r.body.contains(#""index":1"#), "\(r)")
    r = call("POST", "/api/insert", #"{"index":0,"text":"zeroth","expectVersion":2}"#)
    #expect(r.status == 200 && r.body.contains(#""index":0"#), "\(r)")
    r = call("POST", "/api/move", #"{"from":0,"to":2,"expectVersion":3}"#)
    #expect(r.status == 200 && r.body.contains(#""from":0,"to":2"#), "\(r)")
    let list = s.run(["list", "--json"]).stdout
    r = call("GET", "/api/items?stream=main")
    #expect(r.status == 200 && r.body == list, "\(r)")
    r = call("GET", "/api/items?stream=main&at=2")
    #expect(r.status == 200 && r.body == s.run(["replay", "--json", "--at", "2"]).stdout, "\(r)")
    r = call("GET", "/api/streams")
    #expect(r.body + "\n" == s.run(["streams", "--json"]).stdout, "\(r)")
    r = call("GET", "/api/events?from=2&limit=2")
    let log = s.run(["log", "--json", "--from", "2", "--limit", "2"]).stdout
    #expect(r.status == 200 && r.body == log, "\(r)")
    r = call("GET", "/api/diff?stream=main&from=2&to=4")
    #expect(r.body + "\n" == s.run(["diff", "--json", "2", "4"]).stdout, "\(r)")
    let first = s.run(["list", "--json"]).stdout.components(separatedBy: #""id":""#)[1].prefix(36)
    r = call("POST", "/api/remove", #"{"id":"\#(first)","expectVersion":4}"#)
    #expect(r.status == 200 && r.body.contains(#""version":5"#), "\(r)")
    // A message is text: the page is served with a policy that runs only its own script.
    r = call("GET", "/")
    #expect(r.status == 200 && r.body.contains("<script src=\"/app.js\""), "\(r)")
  }

  /// Working together over real HTTP: what /api/edit, /api/restore and
  /// /api/undo answer is what the command line prints with `--json`
  /// (the same events, made one way and the other), a stale drag with
  /// `rebase` lands, and each event reaches the event stream.
  @Test(arguments: Store.allCases) func editRestoreUndoAndRebaseOverHTTP(_ store: Store) throws {
    let s = Sandbox(store)
    let ids = ["A", "B", "C"].map { s.append($0, sender: "ann") }
    let server = try ServedLog.running(s)
    defer { #expect(server.stop().code == 0) }
    func call(_ method: String, _ path: String, _ body: String? = nil) -> ServedLog.Reply {
      server.request(method, path, body)
    }
    var r = call("POST", "/api/edit", #"{"id":"\#(ids[0].prefix(8))","text":"A!","sender":"bob","expectVersion":3}"#)
    #expect(r.status == 200, "\(r)")
    var events = s.run(["log", "--json"]).lines
    #expect(events[3].contains(#""op":"edit","id":"\#(ids[0])","text":"A!","sender":"bob"}"#), "\(events)")
    #expect(maskingTimes(r.body) == (#"{"seq":4,"stream":"main","version":4,"time":"TIME","id":"\#(ids[0])","index":0}"#), "\(r)")
    #expect(s.run("remove", ids[1]).code == 0)
    r = call("POST", "/api/restore", #"{"id":"\#(ids[1])"}"#)
    #expect(maskingTimes(r.body) == (#"{"seq":6,"stream":"main","version":6,"time":"TIME","id":"\#(ids[1])","index":1}"#), "\(r)")
    // The command line's undo and the server's: the same shapes.
    let cli = s.run("undo", "--json")
    #expect(maskingTimes(cli.stdout) == (#"{"seq":7,"stream":"main","version":7,"time":"TIME","id":"\#(ids[1])","index":1,"undoes":6}"#) + "\n", "\(cli)")
    r = call("POST", "/api/undo", #"{"seq":7}"#)
    #expect(maskingTimes(r.body) == (#"{"seq":8,"stream":"main","version":8,"time":"TIME","id":"\#(ids[1])","index":1,"undoes":7}"#), "\(r)")
    r = call("POST", "/api/undo", #"{"seq":4}"#)
    #expect(r.status == 200 && r.body.contains(#""undoes":4}"#), "\(r)")
    r = call("POST", "/api/undo", #"{"seq":4}"#)
    #expect(r.status == 409 && r.body == #"{"error":"event 4 is already undone (by event 9)"}"#, "\(r)")
    // Two drags at version 9: the second, stale, lands where it was meant.
    r = call("POST", "/api/move", #"{"from":2,"to":0,"expectVersion":9,"rebase":true}"#)
    #expect(r.status == 200 && !r.body.contains("rebased"), "\(r)")
    r = call("POST", "/api/move", #"{"from":0,"to":1,"expectVersion":9,"rebase":true}"#)
    #expect(r.status == 200 && r.body.contains(#""from":1,"to":2,"rebased":true}"#), "\(r)")
    #expect(s.run("list").lines.map { String($0.split(separator: " ").last!) } == ["C", "B", "A"])
    r = call("GET", "/api/events?from=4")
    events = s.run(["log", "--json", "--from", "4"]).lines
    #expect(r.body == events.map { $0 + "\n" }.joined(), "\(r)")
    r = call("GET", "/api/diff?stream=main&from=3&to=4")
    #expect(r.body + "\n" == s.run(["diff", "--json", "3", "4"]).stdout && r.body.contains(#""edited":[{"index":0"#), "\(r)")
    #expect(s.run("verify").code == 0)
  }

  @Test func badRequestsAreRefusedAndChangeNothing() throws {
    let s = Sandbox()
    s.append("only")
    let before = s.export()
    let server = try ServedLog.running(s)
    defer { #expect(server.stop().code == 0) }
    let cases: [(String, String, String?, Int, String)] = [
      ("POST", "/api/append", "{not json", 400, "not JSON"),
      ("POST", "/api/append", #"{"text":5}"#, 400, #"\"text\" must be a string"#),
      ("POST", "/api/append", #"{"text":"x","colour":"red"}"#, 400, "unknown member"),
      ("POST", "/api/append", #"{"text":""}"#, 400, "empty"),
      ("POST", "/api/append", "[1]", 400, "must be a JSON object"),
      ("POST", "/api/insert", #"{"index":-1,"text":"x"}"#, 400, "whole number"),
      ("POST", "/api/insert", #"{"index":9223372036854775808,"text":"x"}"#, 400, "0 to 2^63-1"),
      ("POST", "/api/insert", #"{"index":9,"text":"x"}"#, 409, "out of range"),
      ("POST", "/api/move", #"{"from":0,"to":0,"expectVersion":7}"#, 412, "version"),
      ("POST", "/api/remove", #"{"id":"00000000-0000-4000-8000-000000000000"}"#, 404, "no item"),
      ("GET", "/api/items?stream=nope", nil, 404, "no stream"),
      ("GET", "/api/items?stream=%FF", nil, 400, "UTF-8"),
      ("GET", "/api/items?at=x", nil, 400, "invalid at"),
      ("GET", "/api/nothing", nil, 404, "no such route"),
      ("GET", "/api/../../etc/passwd", nil, 404, "no such route"),
      ("GET", "/../../etc/passwd", nil, 404, "no such route"),
      ("DELETE", "/api/streams", nil, 405, "not allowed"),
      ("POST", "/api/append", #"{"text":"x\#u{0}"}"#, 400, "not JSON"),
      // Targets that a proxy and this server could read differently (issue 15).
      ("GET", "/api%2fitems", nil, 400, "encoded /"),
      ("GET", "/api/items%00.json", nil, 400, "NUL"),
      ("GET", "/api/items?stream=main%00evil", nil, 400, "NUL"),
      ("GET", "/api/items?stream=main&stream=evil", nil, 400, "more than once"),
      ("GET", "/api/items?stream=%zz", nil, 400, "malformed %-escape"),
      ("POST", "/api/items", #"{"text":"x"}"#, 405, "not allowed"),
      // Working together.
      ("POST", "/api/edit", #"{"id":"00000000-0000-4000-8000-000000000000","text":"x"}"#, 404, "no item"),
      ("POST", "/api/edit", #"{"text":"x"}"#, 400, #"an edit needs \"id\""#),
      ("POST", "/api/edit", #"{"id":"zzzzzzzz","text":"x"}"#, 400, "malformed id"),
      ("POST", "/api/restore", #"{"id":"00000000-0000-4000-8000-000000000000"}"#, 404, "no item"),
      ("POST", "/api/undo", #"{"seq":5}"#, 404, "there is no event 5"),
      ("POST", "/api/undo", #"{"seq":"1"}"#, 400, "whole number"),
      ("POST", "/api/undo", #"{"stream":"empty"}"#, 409, "nothing to undo"),
      ("POST", "/api/move", #"{"from":0,"to":0,"rebase":true}"#, 400, "needs"),
      ("POST", "/api/move", #"{"from":0,"to":0,"expectVersion":0,"rebase":"yes"}"#, 400, "true or false"),
      ("POST", "/api/append", #"{"text":"x","rebase":true}"#, 400, #"an append takes no \"rebase\""#),
      ("POST", "/api/undo", #"{"seq":1,"rebase":true}"#, 400, #"an undo takes no \"rebase\""#),
    ]
    for (method, path, body, status, words) in cases {
      let r = server.request(method, path, body)
      #expect(r.status == status && r.body.hasPrefix(#"{"error":""#) && r.body.contains(words), "\(method) \(path) \(body ?? ""): \(r)")
    }
    // Over the body limit: 413.
    let big = #"{"text":""# + String(repeating: "a", count: 2 << 20) + #""}"#
    let r = server.request("POST", "/api/append", big)
    #expect(r.status == 413, "\(r.status)")
    #expect(s.export() == before)
  }

  @Test func beyondLocalhostATokenIsRequired() throws {
    let s = Sandbox()
    s.append("secret")
    let refused = s.run(["serve", "--listen", "0.0.0.0:0"])
    #expect(refused.code == 64 && refused.stderr.hasPrefix("msglog: listening on 0.0.0.0:0 lets other machines in"), "\(refused)")
    #expect(s.run(["serve", "--listen", "nowhere:80"]).code == 64)
    #expect(s.run(["serve", "--listen", "127.0.0.1:99999"]).code == 64)
    let token = "0123456789abcdef0123"
    let server = try ServedLog.running(s, listen: "0.0.0.0:0", environment: ["MSGLOG_TOKEN": token])
    defer { #expect(server.stop().code == 0) }
    #expect(server.request("GET", "/api/streams").status == 401)
    #expect(server.request("GET", "/api/streams", headers: ["Authorization: Bearer wrong"]).status == 401)
    let ok = server.request("GET", "/api/streams", headers: ["Authorization: Bearer \(token)"])
    #expect(ok.status == 200 && ok.body.contains("main"), "\(ok)")
    let write = server.request("POST", "/api/append", #"{"text":"x"}"#)
    #expect(write.status == 401)
    #expect(server.request("GET", "/").status == 200)
  }

  /// Server-Sent Events: `id:` is the seq; Last-Event-ID resumes after it,
  /// so a client that reconnects misses nothing and sees nothing twice.
  @Test(arguments: Store.allCases) func eventsStreamAndResume(_ store: Store) throws {
    let s = Sandbox(store)
    for i in 1...3 { s.append("m\(i)") }
    let server = try ServedLog.running(s)
    defer { #expect(server.stop().code == 0) }
    let curl = s.start(
      ["-sN", "-H", "Last-Event-ID: 1", server.url! + "/api/follow"], useDefaultDB: false, runner: "/usr/bin/curl")
    // Resumed (3 is there), then following: m4 arrives live.
    #expect(curl.waitForOutput("id: 3\n"))
    s.append("m4")
    #expect(curl.waitForOutput(#"data: {"seq":4,"#))
    kill(curl.process.processIdentifier, SIGTERM)
    let text = curl.finish().stdout
    let ids = text.split(separator: "\n").filter { $0.hasPrefix("id: ") }.map { String($0.dropFirst(4)) }
    #expect(ids == ["2", "3", "4"], "\(text)")
    #expect(text.contains(#"data: {"seq":4,"stream":"main""#), "\(text)")
  }

  /// 200 event streams at once while two writer processes append: each
  /// stream receives every event once, in seq order.
  @Test func twoHundredStreamsEachReceiveEveryEventOnce() throws {
    let s = Sandbox()
    s.append("seed")
    let server = try ServedLog.running(s)
    defer { #expect(server.stop().code == 0) }
    var connections: [LoopbackSocket] = []
    for i in 0..<200 {
      // From eight client addresses: one address may hold only an eighth of
      // the server's connections, and CI's descriptor limit may be 1,024.
      let source = "127.0.0.\(2 + i % 8)"
      let connection = try #require(LoopbackSocket(port: server.port, from: source), "connect: \(errno)")
      // HTTP/1.0: the stream is not chunked, so lines arrive whole.
      connection.send("GET /api/follow?from=2 HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n")
      connections.append(connection)
    }
    let sockets = connections.map(\.fd)
    let writers = (0..<2).map { w in
      s.start(["append", "--lines"], stdin: Data((0..<25).map { "w\(w)-\($0)" }.joined(separator: "\n").utf8))
    }
    for writer in writers { #expect(writer.finish().code == 0) }
    // Events 2…51, each once, in order, on every stream.
    var received = [String](repeating: "", count: sockets.count)
    // Generous: 200 streams on a loaded CI machine; a passing run ends at once.
    let deadline = Date().addingTimeInterval(120)
    var buffer = [UInt8](repeating: 0, count: 65_536)
    func complete(_ i: Int) -> Bool { received[i].contains("id: 51\n") }
    while Date() < deadline && !(0..<sockets.count).allSatisfy(complete) {
      var fds = sockets.map { pollfd(fd: $0, events: Int16(POLLIN), revents: 0) }
      _ = poll(&fds, nfds_t(fds.count), 200)
      for (i, p) in fds.enumerated() where p.revents & Int16(POLLIN) != 0 {
        let n = recv(p.fd, &buffer, buffer.count, 0)
        if n > 0 { received[i] += String(decoding: buffer[..<n], as: UTF8.self) }
      }
    }
    let expected = (2...51).map(String.init)
    for (i, text) in received.enumerated() {
      let ids = text.split(separator: "\n").filter { $0.hasPrefix("id: ") }.map { String($0.dropFirst(4)) }
      #expect(ids == expected, "stream \(i): \(ids)")
      if ids != expected { break }
    }
  }
}
