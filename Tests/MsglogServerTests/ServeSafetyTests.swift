import Foundation
import MsglogLoopback
import MsglogTestSupport
import Testing

/// `msglog serve` left running on localhost without a token, against what
/// a foreign page, a rebound name, a smuggling proxy or a greedy client can
/// send (SPEC "HTTP: serve", issue 15). Real binary, real sockets.
@Suite(.serialized) struct ServeSafetyTests {

  /// A raw request to the server, `Host` its own unless given.
  static func raw(
    _ server: ServedLog, _ method: String, _ target: String, headers: [String] = [], body: String? = nil,
    host: String? = nil
  ) -> (status: Int, text: String, closed: Bool) {
    var request = "\(method) \(target) HTTP/1.1\r\nHost: \(host ?? "127.0.0.1:\(server.port)")\r\n"
    for header in headers { request += header + "\r\n" }
    if let body { request += "Content-Length: \(body.utf8.count)\r\n" }
    request += "Connection: close\r\n\r\n" + (body ?? "")
    return LoopbackSocket.exchange(port: server.port, request)
  }

  /// A write a foreign page can send without a preflight, or sends from
  /// another origin, is a 403 before anything is read; no answer carries
  /// CORS headers; the page's own writes still work.
  @Test(arguments: Store.allCases) func crossSiteWritesAreRefused(_ store: Store) throws {
    let s = Sandbox(store)
    s.append("only")
    let before = s.export()
    let server = try ServedLog.running(s)
    defer { #expect(server.stop().code == 0) }
    let own = "http://127.0.0.1:\(server.port)"
    let body = #"{"text":"pwned"}"#
    let refused: [[String]] = [
      [],  // no Content-Type
      ["Content-Type: text/plain"],
      ["Content-Type: text/plain;charset=UTF-8"],
      ["Content-Type: application/x-www-form-urlencoded"],
      ["Content-Type: multipart/form-data; boundary=x"],
      ["Content-Type: application/json", "Origin: http://evil.example"],
      ["Content-Type: application/json", "Origin: null"],  // a file:// page
      ["Content-Type: application/json", "Origin: http://127.0.0.1:1"],  // another port
      ["Content-Type: application/json", "Sec-Fetch-Site: cross-site"],
      ["Content-Type: application/json", "Sec-Fetch-Site: same-site", "Origin: http://localhost:1"],
      ["Content-Type: application/json", "Sec-Fetch-Site: same-site"],
    ]
    for headers in refused {
      for path in ["/api/append", "/api/insert", "/api/move", "/api/remove"] {
        let r = Self.raw(server, "POST", path, headers: headers, body: body)
        #expect(r.status == 403 && r.text.contains(#"{"error":"#), "\(path) \(headers): \(r.text)")
        #expect(!r.text.lowercased().contains("access-control-allow"), "\(r.text)")
      }
    }
    #expect(s.export() == before)
    // The page's own write: its origin, same-origin, JSON (with a charset).
    for headers in [
      ["Content-Type: application/json", "Origin: \(own)", "Sec-Fetch-Site: same-origin"],
      ["Content-Type: application/json; charset=utf-8"],
    ] {
      let r = Self.raw(server, "POST", "/api/append", headers: headers, body: #"{"text":"mine"}"#)
      #expect(r.status == 200, "\(headers): \(r.text)")
      #expect(!r.text.lowercased().contains("access-control-allow"))
    }
  }

  /// DNS rebinding: a name the attacker controls, resolved to 127.0.0.1,
  /// reaches the server with its own name in Host: 403, page and API.
  @Test func foreignHostsAreRefused() throws {
    let s = Sandbox()
    s.append("secret")
    let server = try ServedLog.running(s)
    defer { #expect(server.stop().code == 0) }
    for host in [
      "evil.example:\(server.port)", "evil.example", "localhost.evil.example", "127.0.0.1.evil.example", "[::2]",
    ] {
      for path in ["/", "/api/items", "/api/streams", "/api/events"] {
        let r = Self.raw(server, "GET", path, host: host)
        #expect(r.status == 403 && !r.text.contains("secret"), "\(host) \(path): \(r.text)")
      }
    }
    for host in [
      "localhost:\(server.port)", "LOCALHOST", "127.0.0.1", "127.1.2.3:\(server.port)", "[::1]:\(server.port)",
    ] {
      let r = Self.raw(server, "GET", "/api/items", host: host)
      #expect(r.status == 200 && r.text.contains("secret"), "\(host): \(r.text)")
    }
    // A name the user gives is answered.
    let named = try ServedLog.running(s, ["--allow-host", "msglog.lan", "--allow-host", "box.lan"])
    defer { #expect(named.stop().code == 0) }
    for host in ["msglog.lan:\(named.port)", "box.lan"] {
      #expect(Self.raw(named, "GET", "/api/items", host: host).status == 200, "\(host)")
    }
    #expect(Self.raw(named, "GET", "/api/items", host: "evil.example").status == 403)
    #expect(s.run(["serve", "--allow-host", "msglog.lan:80"]).code == 64)
    #expect(s.run(["serve", "--allow-origin", "msglog.lan"]).code == 64)
  }

  /// `--allow-origin` lets one origin's pages in, with CORS headers and an
  /// answered preflight; other origins stay out.
  @Test func anAllowedOriginGetsCORS() throws {
    let s = Sandbox()
    s.append("x")
    let server = try ServedLog.running(s, ["--allow-origin", "http://localhost:3000"])
    defer { #expect(server.stop().code == 0) }
    let preflight = Self.raw(
      server, "OPTIONS", "/api/append",
      headers: ["Origin: http://localhost:3000", "Access-Control-Request-Method: POST"])
    #expect(preflight.status == 204, "\(preflight.text)")
    #expect(preflight.text.contains("Access-Control-Allow-Origin: http://localhost:3000"), "\(preflight.text)")
    #expect(preflight.text.contains("Access-Control-Allow-Methods: POST"), "\(preflight.text)")
    let write = Self.raw(
      server, "POST", "/api/append",
      headers: ["Content-Type: application/json", "Origin: http://localhost:3000", "Sec-Fetch-Site: same-site"],
      body: #"{"text":"from the app"}"#)
    #expect(
      write.status == 200 && write.text.contains("Access-Control-Allow-Origin: http://localhost:3000"), "\(write.text)")
    let other = Self.raw(
      server, "POST", "/api/append", headers: ["Content-Type: application/json", "Origin: http://localhost:3001"],
      body: #"{"text":"no"}"#)
    #expect(other.status == 403 && !other.text.contains("Access-Control-Allow-Origin"), "\(other.text)")
    let otherPreflight = Self.raw(
      server, "OPTIONS", "/api/append",
      headers: ["Origin: http://localhost:3001", "Access-Control-Request-Method: POST"])
    #expect(otherPreflight.status == 405 && !otherPreflight.text.contains("Access-Control-Allow-Origin"))
  }

  /// Where a request ends is never guessed: each of these is a 400 (the
  /// ones whose framing is in doubt with the connection closed), and
  /// nothing is written.
  @Test func framingIsNeverGuessed() throws {
    let s = Sandbox()
    s.append("only")
    let before = s.export()
    let server = try ServedLog.running(s)
    defer { #expect(server.stop().code == 0) }
    let host = "Host: 127.0.0.1:\(server.port)\r\n"
    let json = "Content-Type: application/json\r\n"
    var cases: [(String, String, Bool)] = [
      (
        "two Content-Lengths",
        "POST /api/append HTTP/1.1\r\n\(host)\(json)Content-Length: 12\r\nContent-Length: 13\r\n\r\n{\"text\":\"a\"}",
        true
      ),
      (
        "Content-Length and chunked",
        "POST /api/append HTTP/1.1\r\n\(host)\(json)Content-Length: 4\r\nTransfer-Encoding: chunked\r\n\r\nc\r\n{\"text\":\"a\"}\r\n0\r\n\r\n",
        true
      ),
      (
        "an unknown transfer coding",
        "POST /api/append HTTP/1.1\r\n\(host)\(json)Transfer-Encoding: gzip, chunked\r\n\r\n0\r\n\r\n", true
      ),
      ("HTTP/1.1 without Host", "GET /api/items HTTP/1.1\r\n\r\n", true),
      ("two Hosts", "GET /api/items HTTP/1.1\r\n\(host)\(host)\r\n", true),
      ("an encoded / in the path", "GET /api%2fitems HTTP/1.1\r\n\(host)Connection: close\r\n\r\n", false),
      ("a NUL in the path", "GET /api/items%00.json HTTP/1.1\r\n\(host)Connection: close\r\n\r\n", false),
      ("a NUL in a parameter", "GET /api/items?stream=main%00evil HTTP/1.1\r\n\(host)Connection: close\r\n\r\n", false),
      ("a garbage request line", "GARBAGE\r\n\r\n", true),
      ("a request line without a version", "GET /api/items\r\n\r\n", true),
      ("spaces in the target", "GET /api/items?stream=a b HTTP/1.1\r\n\(host)\r\n", true),
    ]
    // Issue 24 item 1: a request smuggled after one whose framing a proxy
    // and this server could read differently (a folded line, which a proxy
    // may unfold; an empty or non-numeric length; a coding that is not
    // exactly chunked). Each is a 400 and a close: the smuggled append
    // after it is never read as a request.
    let smuggledBody = #"{"stream":"smug","text":"SMUG1"}"#
    let smuggled =
      "POST /api/append HTTP/1.1\r\n\(host)\(json)Content-Length: \(smuggledBody.utf8.count)\r\n\r\n\(smuggledBody)"
    let front = "POST /api/append HTTP/1.1\r\n\(host)\(json)"
    cases += [
      ("Content-Length on a folded line", "\(front)Content-Length:\r\n \(smuggled.utf8.count)\r\n\r\n\(smuggled)", true),
      ("a Content-Length folded", "\(front)Content-Length: 5\r\n 0\r\n\r\n\(smuggled)", true),
      ("Transfer-Encoding on a folded line", "\(front)Transfer-Encoding:\r\n chunked\r\n\r\n0\r\n\r\n\(smuggled)", true),
      ("a transfer coding folded", "\(front)Transfer-Encoding: chunked\r\n , identity\r\n\r\n0\r\n\r\n\(smuggled)", true),
      ("a folded line with a tab", "\(front)Content-Length: 0\r\nX-A: a\r\n\tb\r\n\r\n\(smuggled)", true),
      ("an empty Content-Length", "\(front)Content-Length: \r\n\r\n\(smuggled)", true),
      ("a non-numeric Content-Length", "\(front)Content-Length: 0x10\r\n\r\n\(smuggled)", true),
      ("a signed Content-Length", "\(front)Content-Length: +0\r\n\r\n\(smuggled)", true),
      ("a Content-Length list", "\(front)Content-Length: 0, 0\r\n\r\n\(smuggled)", true),
      ("two equal Content-Lengths", "\(front)Content-Length: 0\r\nContent-Length: 0\r\n\r\n\(smuggled)", true),
      ("chunked, identity", "\(front)Transfer-Encoding: chunked, identity\r\n\r\n0\r\n\r\n\(smuggled)", true),
      ("two Transfer-Encodings", "\(front)Transfer-Encoding: chunked\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n\(smuggled)", true),
      ("Transfer-Encoding on HTTP/1.0", "POST /api/append HTTP/1.0\r\n\(host)\(json)Transfer-Encoding: chunked\r\n\r\n0\r\n\r\n\(smuggled)", true),
      ("a second Content-Type", "\(front)Content-Type: text/plain\r\nContent-Length: 0\r\n\r\n\(smuggled)", true),
      ("a second Origin", "\(front)Origin: http://127.0.0.1\r\nOrigin: http://evil.example\r\nContent-Length: 0\r\n\r\n\(smuggled)", true),
      ("a second Sec-Fetch-Site", "\(front)Sec-Fetch-Site: same-origin\r\nSec-Fetch-Site: cross-site\r\nContent-Length: 0\r\n\r\n\(smuggled)", true),
      ("a second Authorization", "\(front)Authorization: Bearer a\r\nAuthorization: Bearer b\r\nContent-Length: 0\r\n\r\n\(smuggled)", true),
      ("a space before a colon", "\(front)Content-Length : 0\r\n\r\n\(smuggled)", true),
      ("a bare CR in a header", "\(front)X-A: a\rContent-Length: 0\r\n\r\n\(smuggled)", true),
      // A helper's attack: read as chunked, and as a field of its own.
      ("chunked in capitals", "\(front)Transfer-Encoding: CHUNKED\r\n\r\n0\r\n\r\n\(smuggled)", true),
      ("a bare LF among CR LFs", "\(front)X-A: x\nContent-Length: 0\r\n\r\n\(smuggled)", true),
      ("CR LFs after bare LFs", "POST /api/append HTTP/1.1\n\(host)\(json)Content-Length: 0\n\n\(smuggled)", true),
    ]
    for (what, request, closes) in cases {
      let r = LoopbackSocket.exchange(port: server.port, request)
      #expect(r.status == 400, "\(what): \(r.text)")
      #expect(r.text.contains(#"{"error":"#), "\(what): \(r.text)")
      if closes { #expect(r.closed, "\(what): the connection stays open") }
      #expect(!r.text.contains("SMUG1") && !r.text.contains("}HTTP/1.1 "), "\(what): a second answer: \(r.text)")
    }
    #expect(s.export() == before)
    #expect(!s.run(["log", "--all"]).stdout.contains("SMUG1"))
    // With a token: the right token and then a wrong one is no authorisation.
    let token = "0123456789abcdef0123"
    let guarded = try ServedLog.running(s, listen: "0.0.0.0:0", environment: ["MSGLOG_TOKEN": token])
    defer { #expect(guarded.stop().code == 0) }
    let twice = Self.raw(
      guarded, "GET", "/api/streams", headers: ["Authorization: Bearer \(token)", "Authorization: Bearer wrong"])
    #expect(twice.status == 400 && twice.closed, "\(twice.text)")
  }

  /// The page cannot be framed; 405 names what is allowed; HEAD works
  /// wherever GET does; the bearer scheme is matched in any case.
  @Test func headersAndMethods() throws {
    let s = Sandbox()
    s.append("x")
    let server = try ServedLog.running(s)
    defer { #expect(server.stop().code == 0) }
    let page = Self.raw(server, "GET", "/")
    #expect(page.text.contains("frame-ancestors 'none'") && page.text.contains("X-Frame-Options: DENY"), "\(page.text)")
    let wrong = Self.raw(server, "DELETE", "/api/items")
    #expect(wrong.status == 405 && wrong.text.contains("Allow: GET, HEAD"), "\(wrong.text)")
    #expect(Self.raw(server, "GET", "/api/append").text.contains("Allow: POST"))
    for path in ["/", "/app.js", "/app.css", "/api/streams", "/api/items", "/api/events", "/api/diff?from=0&to=1"] {
      let head = Self.raw(server, "HEAD", path)
      let body = head.text.components(separatedBy: "\r\n\r\n").dropFirst().joined()
      #expect(head.status == 200 && body.isEmpty, "HEAD \(path): \(head.text)")
    }
    let token = "0123456789abcdef0123"
    let guarded = try ServedLog.running(s, listen: "0.0.0.0:0", environment: ["MSGLOG_TOKEN": token])
    defer { #expect(guarded.stop().code == 0) }
    for scheme in ["Bearer", "bearer", "BEARER", "bEaReR"] {
      #expect(
        Self.raw(guarded, "GET", "/api/streams", headers: ["Authorization: \(scheme) \(token)"]).status == 200,
        "\(scheme)")
    }
    #expect(Self.raw(guarded, "GET", "/api/streams", headers: ["Authorization: Basic \(token)"]).status == 401)
    #expect(Self.raw(guarded, "GET", "/api/streams", headers: ["Authorization: Bearer \(token)x"]).status == 401)
  }

  /// A link someone follows that the server cannot read (a stream name
  /// with a control character): a browser's navigation gets a 400 page it
  /// shows as a page, with what can be wrong (not the client's words: a
  /// parameter's name is theirs) and a link to the page, and runs nothing
  /// of it; any other client still gets `{"error":…}`.
  @Test func aBrokenLinkIsAPageToABrowser() throws {
    let s = Sandbox()
    s.append("x")
    let server = try ServedLog.running(s)
    defer { #expect(server.stop().code == 0) }
    let navigation = ["Sec-Fetch-Mode: navigate", "Accept: text/html"]
    let page = Self.raw(server, "GET", "/?stream=a%01b", headers: navigation)
    #expect(page.status == 400 && page.text.contains("Content-Type: text/html; charset=utf-8"), "\(page.text)")
    #expect(page.text.contains("a control character") && page.text.contains(#"<a href="/">"#))
    #expect(page.text.contains("Content-Security-Policy: default-src 'none'"), "\(page.text)")
    let named = Self.raw(server, "GET", "/?Your%20token%20expired%2C%20see%20%3Cb%3Eevil%3C%2Fb%3E=%01", headers: navigation)
    #expect(named.status == 400 && named.text.contains("This link is not right"), "\(named.text)")
    #expect(!named.text.contains("token expired") && !named.text.contains("evil"), "\(named.text)")
    for headers in [[], ["Accept: text/html"], ["Sec-Fetch-Mode: cors"]] {
      let api = Self.raw(server, "GET", "/api/items?stream=a%01b", headers: headers)
      #expect(api.status == 400 && api.text.hasSuffix(#"{"error":"the parameter stream has a control character"}"#))
    }
    // A navigation with a body, or not a GET, is no link: JSON as before.
    let posted = Self.raw(server, "POST", "/?stream=a%01b", headers: navigation, body: "{}")
    #expect(posted.status == 400 && posted.text.contains(#"{"error":"#), "\(posted.text)")
    #expect(Self.raw(server, "GET", "/?stream=fine", headers: navigation).status == 200)
  }

  /// Six clients reading the same big answer slowly: the server streams it
  /// from the log as they take it, instead of holding six copies.
  @Test func bigAnswersAreStreamedWithBoundedMemory() throws {
    let s = Sandbox()
    let text = String(repeating: "m", count: 1_000_000)
    let lines = (0..<30).map { #"{"op":"append","stream":"heavy","text":"\#($0)\#(text)"}"# }.joined(separator: "\n")
    #expect(s.run(["import"], stdin: Data(lines.utf8)).code == 0)
    let server = try ServedLog.running(s)
    defer { #expect(server.stop().code == 0) }
    let before = try Self.memory(of: server.pid)
    let received = Locked([Int](repeating: 0, count: 6))
    let peak = Locked(before.rss)
    let done = DispatchGroup()
    let port = server.port
    for client in 0..<6 {
      DispatchQueue.global().async(group: done) {
        guard let socket = LoopbackSocket(port: port) else { return }
        socket.send(
          "GET /api/events?stream=heavy&limit=100000 HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n")
        // A slow reader: 64 KiB at a time, with a pause (deliberate: the
        // trickle is the scenario).
        while let chunk = socket.read(atMost: 65_536, seconds: 30) {
          received.update { $0[client] += chunk.count }
          usleep(2_000)
        }
      }
    }
    while done.wait(timeout: .now() + .milliseconds(50)) == .timedOut {
      if let now = try? Self.memory(of: server.pid) { peak.update { $0 = max($0, now.rss, now.peak) } }
    }
    let growth = peak.value - before.rss
    print("serve: six slow readers of 30 MiB each: peak RSS growth \(growth >> 20) MiB")
    #expect(growth < 96 << 20, "peak RSS grew by \(growth >> 20) MiB")
    for count in received.value { #expect(count > 30_000_000, "a reader received \(count) bytes") }
  }

  /// The process's resident memory now and at its peak (VmRSS, VmHWM).
  static func memory(of pid: Int32) throws -> (rss: Int, peak: Int) {
    let status = try String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8)
    func field(_ name: String) -> Int {
      let line = status.split(separator: "\n").first { $0.hasPrefix(name + ":") } ?? ""
      return (Int(line.split(separator: " ").dropFirst().first ?? "0") ?? 0) * 1024
    }
    return (field("VmRSS"), field("VmHWM"))
  }

  /// CPU seconds the process has used (user + system, all threads).
  static func cpuSeconds(of pid: Int32) throws -> Double {
    let stat = try String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8)
    // After the command name's closing parenthesis: fields 3 on; utime and stime are 14 and 15.
    let fields = stat[stat.range(of: ")", options: .backwards)!.upperBound...].split(separator: " ")
    let ticks = Double(sysconf(Int32(_SC_CLK_TCK)))
    return (Double(fields[11])! + Double(fields[12])!) / ticks
  }

  /// With few descriptors and more idle connections than they allow, the
  /// server neither spins nor stops answering for good: it waits, and
  /// answers once they close.
  @Test func outOfDescriptorsItWaitsWithoutSpinning() throws {
    let s = Sandbox()
    s.append("x")
    let server = try ServedLog.running(s, descriptors: 128)
    defer { #expect(server.stop().code == 0) }
    var idle: [LoopbackSocket] = []
    for _ in 0..<200 {
      if let socket = LoopbackSocket(port: server.port) { idle.append(socket) }
    }
    let cpu = try Self.cpuSeconds(of: server.pid)
    let start = Date()
    // Deliberate: the CPU a waiting server uses is measured over a window
    // (a spinning one would use most of a core all along it).
    sleep(5)
    let used = try Self.cpuSeconds(of: server.pid) - cpu
    let ratio = used / Date().timeIntervalSince(start)
    print("serve: 200 idle connections under ulimit -n 128: \(String(format: "%.3f", ratio)) of a core")
    #expect(ratio < 0.5, "the server used \(ratio) of a core while waiting")
    idle.removeAll()
    // Liveness, not speed: a generous window, since the whole suite (browsers
    // included) may be keeping both cores busy meanwhile.
    let closed = Date()
    var answered = false
    for _ in 0..<300 where !answered {
      answered = Self.raw(server, "GET", "/api/streams").status == 200
      if !answered { usleep(100_000) }
    }
    print("serve: answered again \(String(format: "%.1f", Date().timeIntervalSince(closed))) s after the idle connections closed")
    #expect(answered, "the server does not answer once the idle connections closed")
  }

  /// Headers trickled a byte at a time do not hold a connection for ever:
  /// the server ends it once the header deadline (10 s) has passed, long
  /// before the last byte would come (40 s), though no gap between two
  /// bytes is anywhere near the idle timeout.
  @Test func trickledHeadersAreCutOff() throws {
    let s = Sandbox()
    let server = try ServedLog.running(s)
    defer { #expect(server.stop().code == 0) }
    let socket = try #require(LoopbackSocket(port: server.port))
    let request = Array(
      ("GET /api/streams HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: " + String(repeating: "a", count: 360) + "\r\n\r\n")
        .utf8)
    let start = Date()
    var sent = 0
    var cut = false
    while sent < request.count && !cut {
      if !socket.send([request[sent]]) { cut = true }
      sent += 1
      // An answer (a 4xx) or the end of the connection, within 100 ms.
      if let answer = socket.read(atMost: 4096, seconds: 0.1), answer.isEmpty { continue }
      cut = true
    }
    print(
      "serve: trickled headers cut off after \(Int(Date().timeIntervalSince(start))) s, \(sent) of \(request.count) bytes"
    )
    #expect(cut && sent < request.count, "the server waited for all of the trickled headers")
  }

  /// A stream with no events yet is followed from the head: a client that
  /// resumes beyond the head (its page saw another log) or asks for seq 1
  /// gets the new events, without the whole log read for it.
  @Test func aNewStreamIsFollowedFromTheHead() throws {
    let s = Sandbox()
    for i in 1...3 { s.append("old \(i)", stream: "other") }
    let server = try ServedLog.running(s)
    defer { #expect(server.stop().code == 0) }
    for (stream, headers) in [("fresh", ["Last-Event-ID: 41"]), ("newer", [])] {
      let socket = try #require(LoopbackSocket(port: server.port))
      let target = headers.isEmpty ? "/api/follow?stream=\(stream)&from=1" : "/api/follow?stream=\(stream)"
      socket.send("GET \(target) HTTP/1.0\r\nHost: 127.0.0.1\r\n\(headers.map { $0 + "\r\n" }.joined())\r\n")
      let opening = socket.receive(seconds: 1, until: { $0.contains("retry:") })
      #expect(opening.text.hasPrefix("HTTP/1.1 200"), "\(headers): \(opening.text)")
      let seq = s.run(["log", "--all", "--json"]).stdout.split(separator: "\n").count + 1
      s.append("new", stream: stream)
      let events = socket.receive(seconds: 5, until: { $0.contains("id: \(seq)\n") })
      #expect(
        events.text.contains("id: \(seq)\n") && events.text.contains(#""text":"new""#), "\(headers): \(events.text)")
      #expect(!events.text.contains("old"))
    }
  }

  /// The banner names the database as it may be shown: a PostgreSQL URL
  /// without its password.
  @Test func theBannerHidesThePassword() throws {
    let s = Sandbox(.postgres)
    s.append("x")
    let url = try #require(URLComponents(string: s.db))
    var withPassword = url
    withPassword.password = "hunter2-serve"
    let server = try ServedLog.running(s, environment: ["MSGLOG_DB": withPassword.string!])
    let run = server.stop()
    #expect(run.code == 0, "\(run)")
    #expect(run.stdout.hasPrefix("msglog: serving postgres"), "\(run.stdout)")
    #expect(!run.stdout.contains("hunter2") && !run.stderr.contains("hunter2"), "\(run)")
  }
}

/// A value threads share in a test.
final class Locked<Value>: @unchecked Sendable {
  private var stored: Value
  private let lock = NSLock()
  init(_ value: Value) { stored = value }
  var value: Value { lock.withLock { stored } }
  func update(_ body: (inout Value) -> Void) { lock.withLock { body(&stored) } }
}
