import Foundation
import MsglogTestSupport
import Synchronization
import Testing

#if canImport(Glibc)
  import Glibc
#endif

/// Operating `msglog serve` (SPEC.md "Operating `serve`"), over real HTTP
/// against the real binary: the request log as an operator reads it, the
/// health checks, `/metrics` read by Prometheus's own tools (promtool, a
/// Prometheus server, prometheus-client's parser), the OpenAPI document
/// driven by schemathesis, and HTTPS with a certificate made here.
@Suite(.serialized) struct OperationsTests {
  static let token = "operations-token-" + UUID().uuidString.prefix(8)
  static let bearer = "Authorization: Bearer \(token)"

  // MARK: - The request log

  /// One line per request on stderr, field by field in the order SPEC.md
  /// names (text: space-separated; json: one object with exactly those
  /// keys); a client's valid X-Request-ID kept and echoed, an invalid one
  /// replaced, and one holding a secret too; the value of a `token` query parameter left out; and no
  /// line anywhere on stderr holds the token or a body's text.
  @Test(arguments: ["text", "json"]) func theRequestLogTellsEachRequestFieldByField(_ format: String) throws {
    let s = Sandbox()
    let secret = "body-text-" + UUID().uuidString
    let server = try ServedLog.running(s, ["--token", Self.token, "--log-format", format])
    let url = server.url!
    struct Sent {
      var method: String
      var path: String
      var exchange: Operations.Exchange
    }
    var sent: [Sent] = []
    func send(_ method: String, _ path: String, _ extra: [String] = []) {
      // --raw: a chunked answer's bytes as sent (curl counts them decoded otherwise).
      let exchange = Operations.curl(url + path, ["--raw", "-X", method] + extra, in: s.dir)
      sent.append(Sent(method: method, path: path, exchange: exchange))
    }
    send("GET", "/livez", ["-H", "X-Request-ID: probe-1.a_B"])
    let body = s.dir + "/body.json"
    try Data(#"{"text":"\#(secret)","sender":"ann"}"#.utf8).write(to: URL(fileURLWithPath: body))
    send("POST", "/api/append", ["-H", Self.bearer, "-H", "Content-Type: application/json", "--data-binary", "@" + body])
    send("GET", "/api/items?stream=main&token=\(Self.token)")
    send("GET", "/api/items?stream=main", ["-H", Self.bearer, "-H", "X-Request-ID: not valid!"])
    send("GET", "/no/such/route", ["-H", Self.bearer])
    // An id that holds a secret is not written or echoed: the operator's token, or a named token's 64 digits.
    let hexSecret = String(repeating: "0123456789abcdef", count: 4)
    send("GET", "/livez", ["-H", "X-Request-ID: \(Self.token)"])
    send("GET", "/livez", ["-H", "X-Request-ID: \(hexSecret)"])
    let run = server.stop()
    #expect(run.code == 0, "\(run)")
    #expect(sent.map(\.exchange.status) == [200, 200, 401, 200, 404, 200, 200], "\(sent.map(\.exchange))")
    #expect(sent[3].exchange.body.contains(secret))

    // Every id is echoed; a valid one as sent, else one made here.
    let ids = sent.map { $0.exchange.headers["x-request-id"] ?? "" }
    #expect(ids[0] == "probe-1.a_B", "\(ids)")
    for id in ids.dropFirst() {
      #expect(id.wholeMatch(of: /[0-9a-f]{8}-[0-9a-f]+/) != nil, "a made id: \(id)")
    }
    #expect(Set(ids).count == ids.count, "\(ids)")

    let lines = Operations.lines(run.stderr)
    #expect(lines.count == sent.count, "one line per request: \(run.stderr)")
    for line in lines {
      #expect(!line.contains(Self.token), "the token in a log line: \(line)")
      #expect(!line.contains(hexSecret), "a secret in a log line: \(line)")
      #expect(!line.contains(secret), "a body in a log line: \(line)")
    }
    // The operator's token is named as such, never shown; none is `-`.
    for ((line, request), token) in zip(zip(lines, sent), ["-", "(operator)", "-", "(operator)", "-", "-", "-"]) {
      let fields: [String: String]
      if format == "text" {
        let parts = line.split(separator: " ").map(String.init)
        try #require(parts.count == (request.exchange.status == 401 ? 10 : 9), "\(line)")
        fields = [
          "time": parts[0], "id": parts[1], "client": parts[2], "token": parts[3], "method": parts[4],
          "path": parts[5], "status": parts[6], "bytes": parts[7], "ms": parts[8],
          "refused": parts.count == 10 ? String(parts[9].dropFirst("refused=".count)) : "<null>",
        ]
      } else {
        let object = try #require(
          try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any], "\(line)")
        let keys: Set = ["time", "id", "client", "token", "method", "path", "status", "bytes", "ms"]
        #expect(Set(object.keys) == keys.union(request.exchange.status == 401 ? ["refused"] : []), "\(line)")
        #expect(object["status"] is NSNumber && object["bytes"] is NSNumber && object["ms"] is NSNumber, "\(line)")
        fields = object.mapValues { $0 is NSNull ? "-" : "\($0)" }.merging(["refused": "<null>"]) { a, _ in a }
      }
      #expect(fields["time"]!.wholeMatch(of: /\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z/) != nil, "\(line)")
      #expect(fields["id"] == request.exchange.headers["x-request-id"], "\(line)")
      #expect(fields["client"] == "127.0.0.1" && fields["token"] == token && fields["method"] == request.method)
      #expect(fields["refused"] == (request.exchange.status == 401 ? "missing" : "<null>"), "\(line)")
      let path = request.path.replacing("token=\(Self.token)", with: "token=")
      #expect(fields["path"] == path, "\(line)")
      #expect(fields["status"] == String(request.exchange.status), "\(line)")
      #expect(fields["bytes"] == String(request.exchange.received), "the bytes curl received: \(line)")
      #expect((Double(fields["ms"]!) ?? -1) >= 0, "\(line)")
    }
  }

  /// `--log-format none`: nothing on stderr, however many requests; a
  /// format that is none of the three is a usage error.
  @Test func theRequestLogCanBeTurnedOff() throws {
    let s = Sandbox()
    let server = try ServedLog.running(s, ["--log-format", "none"])
    #expect(server.request("POST", "/api/append", #"{"text":"quiet"}"#).status == 200)
    #expect(server.request("GET", "/api/items").status == 200)
    let run = server.stop()
    #expect(run.code == 0 && run.stderr.isEmpty, "\(run)")
    let refused = s.run(["serve", "--log-format", "xml"])
    #expect(refused.code == 64 && refused.stderr.hasPrefix("msglog: invalid --log-format 'xml'"), "\(refused)")
  }

  /// A request whose client hangs up before its answer — its body cut
  /// off — has its line (status 499, nothing sent) and its count: a flood
  /// of abandoned uploads left neither, where the same request held open
  /// to its deadline was logged as a 408.
  @Test func aRequestAbandonedMidBodyIsLoggedAndCounted() throws {
    let s = Sandbox()
    let server = try ServedLog.running(s, ["--token", Self.token, "--log-format", "json"])
    let body = s.dir + "/whole.json"
    try Data(#"{"text":"whole"}"#.utf8).write(to: URL(fileURLWithPath: body))
    let whole = Operations.curl(
      server.url! + "/api/append",
      ["-H", Self.bearer, "-H", "Content-Type: application/json", "--data-binary", "@" + body], in: s.dir)
    #expect(whole.status == 200)
    let cut = python([
      "-c",
      #"""
      import socket, sys, time
      for i in range(3):
          s = socket.create_connection(("127.0.0.1", int(sys.argv[1])))
          if i == 2:
              # After an answer on the same connection: the cut request's line counts none of its bytes.
              s.sendall(b"GET /livez HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
              answer = b""
              while b'"ok"}' not in answer:
                  answer += s.recv(4096)
          s.sendall((b"POST /api/append HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Request-ID: cut-%d\r\n" % i)
                    + b"Authorization: Bearer " + sys.argv[2].encode() + b"\r\n"
                    + b"Content-Type: application/json\r\nContent-Length: 100\r\n\r\n{\"te")
          time.sleep(0.2)
          s.close()
      """#, String(server.port), Self.token,
    ])
    #expect(cut.code == 0, "\(cut)")
    // Counted once the server has seen each connection close.
    var abandoned: Double? = nil
    for _ in 0..<100 where abandoned != 3 {
      let scrape = Operations.curl(server.url! + "/metrics", ["-H", Self.bearer], in: s.dir)
      abandoned = try Samples(scrape.body, in: s.dir).value(
        "msglog_http_requests_total", ["method": "POST", "route": "/api/append", "code": "499"])
      if abandoned != 3 { usleep(50_000) }
    }
    #expect(abandoned == 3)
    let run = server.stop()
    let cutLines = try Operations.lines(run.stderr).compactMap { line in
      try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any]
    }.filter { ($0["id"] as? String)?.hasPrefix("cut-") == true }
    #expect(cutLines.map { $0["id"] as? String } == ["cut-0", "cut-1", "cut-2"], "\(run.stderr)")
    for line in cutLines {
      #expect(line["status"] as? Int == 499 && line["bytes"] as? Int == 0 && line["token"] as? String == "(operator)")
    }
    let listed = s.run(["list"])
    #expect(listed.code == 0 && listed.stdout.hasSuffix(" whole\n") && listed.stdout.split(separator: "\n").count == 1)
  }

  /// Started without stdin and stderr (`<&- 2>&-`, as some supervisors
  /// do), serve goes on serving: its own pipes used to take descriptors 0
  /// and 2, so its first request-log line went into its stop pipe and it
  /// exited 0 after one answer.
  @Test func startedWithoutStdinAndStderrItServesOn() throws {
    let s = Sandbox()
    let server = ServedLog(s, redirections: "<&- 2>&-")
    try #require(server.url != nil, "the server printed no address")
    for _ in 0..<3 { #expect(server.request("GET", "/livez").status == 200) }
    #expect(server.request("POST", "/api/append", #"{"text":"kept"}"#).status == 200)
    #expect(server.request("GET", "/api/items").body.contains("kept"))
    let run = server.stop()
    #expect(run.code == 0, "\(run)")
  }

  /// A hang-up (the terminal serve ran in closed) stops it as SIGTERM does:
  /// the answers under way finish, exit 0 — not the default action's kill
  /// (exit 129) with committed writes unanswered.
  @Test func aHangUpStopsItAsSIGTERMDoes() throws {
    let s = Sandbox()
    let server = try ServedLog.running(s)
    #expect(server.request("POST", "/api/append", #"{"text":"before the hang-up"}"#).status == 200)
    let run = server.stop(signal: SIGHUP)
    #expect(run.code == 0, "\(run)")
    #expect(s.run(["list"]).stdout.contains("before the hang-up"))

    // Started with hang-ups ignored (`nohup`), it serves on after one.
    let kept = ServedLog(s, redirections: "", ignoringHangUps: true)
    try #require(kept.url != nil, "the server printed no address")
    kill(kept.pid, SIGHUP)
    #expect(kept.request("POST", "/api/append", #"{"text":"after the hang-up"}"#).status == 200)
    #expect(kept.stop().code == 0)
  }

  /// Under a file-size limit the database reaches (`ulimit -f`, systemd's
  /// LimitFSIZE), a write is refused 503 saying so (it said "input/output
  /// error", or that the disk was full), an error line tells the operator,
  /// serve serves on, and every write it answered is kept. (The signal that
  /// killed a serve under 16 writers, SIGXFSZ, is ignored: the CLI's
  /// `aFileSizeLimitFailsCleanly` shows it; here it is not met.)
  @Test func aFileSizeLimitIsSaidAndSurvived() throws {
    let s = Sandbox()
    s.append("before the limit")
    // At the file's size (dash's blocks are 512 bytes): the first write meets it.
    let size = try #require(try FileManager.default.attributesOfItem(atPath: s.db + "/data.mdb")[.size] as? Int)
    let server = ServedLog(s, fileSizeBlocks: size / 512 + 8)
    try #require(server.url != nil, "the server printed no address")
    let text = String(repeating: "x", count: 8_000)
    var kept = 0
    var refused: [ServedLog.Reply] = []
    // Past the first refusal too: a write that finds the file at the limit
    // is the one the signal came with. (A watchdog only: the limit is met
    // within a few hundred appends.)
    for _ in 0..<2_000 where refused.count < 10 {
      let r = server.request("POST", "/api/append", #"{"text":"\#(text)"}"#)
      if r.status == 200 { kept += 1 } else { refused.append(r) }
    }
    #expect(
      refused.count == 10 && refused.allSatisfy { $0.status == 503 && $0.body.contains("file-size limit") },
      "\(refused)")
    #expect(server.request("GET", "/livez").status == 200, "the server did not serve on")
    let run = server.stop()
    #expect(run.code == 0, "\(run.code): \(run.stderr.suffix(300))")
    #expect(
      run.stderr.contains("msglog: error: database error: the database file could not be written past"),
      "\(run.stderr.suffix(300))")
    #expect(s.run(["list"]).lines.count == kept + 1)
    #expect(s.run(["verify"]).code == 0)
  }

  // MARK: - Health

  /// /livez and /readyz answer without the token (which every /api/ route
  /// needs); when the LMDB directory is removed, /readyz answers 503 with
  /// a reason that names no path, while /livez still answers 200.
  @Test func readinessFailsWhenTheLMDBDirectoryIsRemoved() throws {
    let s = Sandbox()
    s.append("before")
    let server = try ServedLog.running(s, ["--token", Self.token])
    defer { _ = server.stop() }
    let url = server.url!
    var r = Operations.curl(url + "/livez", [], in: s.dir)
    #expect(r.status == 200 && r.body == #"{"status":"ok"}"#, "\(r)")
    r = Operations.curl(url + "/readyz", [], in: s.dir)
    #expect(r.status == 200 && r.body == #"{"status":"ok"}"#, "\(r)")
    r = Operations.curl(url + "/api/items", [], in: s.dir)
    #expect(r.status == 401, "the API needs the token: \(r)")

    try FileManager.default.removeItem(atPath: s.db)
    r = Operations.curl(url + "/readyz", [], in: s.dir)
    #expect(r.status == 503, "\(r)")
    let answer = try JSONSerialization.jsonObject(with: Data(r.body.utf8)) as? [String: String]
    #expect(answer?["status"] == "unavailable" && !(answer?["error"] ?? "").isEmpty, "\(r)")
    #expect(!r.body.contains(s.dir), "the answer names no path: \(r)")
    r = Operations.curl(url + "/livez", [], in: s.dir)
    #expect(r.status == 200, "the process still serves: \(r)")
  }

  /// A data file cut short behind the server's back while it serves
  /// (pages in use lost past its end, its roots inside it): every write is
  /// refused, so /readyz turns 503, saying so and naming no path, while
  /// the operator's log names the page lost; reads of what is left go on,
  /// /livez answers 200, and the file is not changed by a byte. A server
  /// started on such a file says the same.
  @Test func readinessFailsOnceTheDataFileIsCutShort() throws {
    let (_, whole) = try CutDataFiles.endingInPagesInUse()
    let s = try CutDataFiles.cut(whole, by: 0)
    let file = s.db + "/data.mdb"
    let server = try ServedLog.running(s, ["--token", Self.token])
    let url = server.url!
    let items = ["-H", Self.bearer]
    let append = [
      "-X", "POST", "-H", Self.bearer, "-H", "Content-Type: application/json", "--data-binary", #"{"text":"lost?"}"#,
    ]
    func expectCutShort(_ r: Operations.Exchange, sourceLocation: SourceLocation = #_sourceLocation) throws {
      #expect(r.status == 503, "\(r)", sourceLocation: sourceLocation)
      let answer = try JSONSerialization.jsonObject(with: Data(r.body.utf8)) as? [String: String]
      #expect(
        answer == ["status": "unavailable", "error": "the database file is cut short"], "\(r)",
        sourceLocation: sourceLocation)
      #expect(!r.body.contains(s.dir), "the answer names no path: \(r)", sourceLocation: sourceLocation)
    }
    var r = Operations.curl(url + "/readyz", [], in: s.dir)
    #expect(r.status == 200, "\(r)")
    #expect(Operations.curl(url + "/api/items?stream=s1", items, in: s.dir).status == 200)

    let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: file))
    try handle.truncate(atOffset: UInt64(whole.count - 1))
    try handle.close()
    try #require(s.run("verify").stdout.hasPrefix(CutDataFiles.said))
    let cut = try Data(contentsOf: URL(fileURLWithPath: file))
    try expectCutShort(Operations.curl(url + "/readyz", [], in: s.dir))
    r = Operations.curl(url + "/api/append", append, in: s.dir)
    #expect(r.status == 503, "the write is refused: \(r)")
    r = Operations.curl(url + "/api/items?stream=s1", items, in: s.dir)
    #expect(r.status == 200, "a read of what is left: \(r)")
    #expect(Operations.curl(url + "/livez", [], in: s.dir).status == 200)
    var run = server.stop()
    #expect(run.stderr.contains("msglog: warn: " + CutDataFiles.said), "\(run.stderr)")
    #expect(try Data(contentsOf: URL(fileURLWithPath: file)) == cut)

    // Started on it: opening the tables writes, so reads are refused too.
    let restarted = try ServedLog.running(s, ["--token", Self.token])
    try expectCutShort(Operations.curl(restarted.url! + "/readyz", [], in: s.dir))
    #expect(Operations.curl(restarted.url! + "/livez", [], in: s.dir).status == 200)
    run = restarted.stop()
    #expect(run.stderr.contains("msglog: warn: " + CutDataFiles.said), "\(run.stderr)")
    #expect(try Data(contentsOf: URL(fileURLWithPath: file)) == cut)
  }

  /// On PostgreSQL (a server of the test's own): /readyz is 200 while the
  /// server answers, 503 once it is stopped (the answer names neither the
  /// URL nor the password; the operator's warn line says more, without the
  /// password), and 200 again, with writes, once it is back.
  @Test func readinessFollowsPostgreSQL() throws {
    let pg = PostgresServer.primary()
    defer { pg.stop() }
    let s = Sandbox()
    let server = try ServedLog.running(s, environment: ["MSGLOG_DB": pg.url])
    let url = server.url!
    #expect(server.request("POST", "/api/append", #"{"text":"one"}"#).status == 200)
    var r = Operations.curl(url + "/readyz", [], in: s.dir)
    #expect(r.status == 200, "\(r)")

    #expect(pg.control("crash") == 0)
    r = Operations.curl(url + "/readyz", [], in: s.dir)
    #expect(r.status == 503 && r.body.contains(#""status":"unavailable""#), "\(r)")
    let password = String(pg.url.split(separator: "@")[0].split(separator: ":").last!)
    #expect(!r.body.contains(password) && !r.body.contains("127.0.0.1"), "\(r)")

    #expect(pg.control("restart") == 0)
    // A watchdog only: the first probe after the restart is expected to answer.
    for _ in 0..<240 {
      r = Operations.curl(url + "/readyz", [], in: s.dir)
      if r.status == 200 { break }
      usleep(250_000)
    }
    #expect(r.status == 200, "ready again: \(r)")
    #expect(server.request("POST", "/api/append", #"{"text":"two"}"#).status == 200)
    let run = server.stop()
    #expect(run.code == 0, "\(run)")
    #expect(run.stderr.contains("msglog: warn: the store does not answer"), "\(run.stderr)")
    #expect(!run.stderr.contains(password), "\(run.stderr)")
  }

  /// A PostgreSQL server that hangs (every process of it stopped, as a
  /// stalled disk or a frozen VM does) leaves /metrics, scraped with the
  /// operator's token (checked without the store), answering with the head
  /// last read and no sync gauges, rather than waiting as long as the
  /// database: an attacker's pass saw a scrape take 31 s, past every
  /// scraper's timeout, when it was needed most. (The curl's 20 s is a
  /// watchdog: before, the scrape waited for the database to go on.)
  @Test func metricsAnswerWhilePostgreSQLHangs() throws {
    let pg = PostgresServer.primary()
    defer { pg.stop() }
    let s = Sandbox()
    let token = "operator-secret-0123456789"
    let server = try ServedLog.running(s, ["--token", token], environment: ["MSGLOG_DB": pg.url])
    let url = server.url!
    let bearer = ["-H", "Authorization: Bearer \(token)"]
    #expect(
      server.request("POST", "/api/append", #"{"text":"one"}"#, headers: ["Authorization: Bearer \(token)"]).status
        == 200)
    let before = Operations.curl(url + "/metrics", bearer, in: s.dir)
    #expect(before.status == 200 && before.body.contains("msglog_sync_replicas"), "\(before.body.prefix(300))")
    let postmaster = try #require(
      (try? String(contentsOfFile: pg.directory + "/data/postmaster.pid", encoding: .utf8))?
        .split(separator: "\n").first.flatMap { Int32($0) })
    let children = runProgram("/usr/bin/pgrep", ["-P", String(postmaster)]).stdout
      .split(separator: "\n").compactMap { Int32($0) }
    let frozen = [postmaster] + children
    for pid in frozen { kill(pid, SIGSTOP) }
    let r = Operations.curl(url + "/metrics", bearer + ["--max-time", "20"], in: s.dir)
    for pid in frozen { kill(pid, SIGCONT) }
    #expect(r.status == 200 && r.body.contains("msglog_head_seq 1\n"), "\(r.status): \(r.body.prefix(300))")
    #expect(!r.body.contains("msglog_sync_replicas"), "stale sync gauges: \(r.body.prefix(300))")
    #expect(server.stop().code == 0)
  }

  /// Served from a PostgreSQL hot standby: /readyz answers 200 with
  /// `"replica":true`, and goes on doing so once its primary is gone (the
  /// standby still answers reads); on the primary, no `replica`.
  @Test func readinessOnAStandbySaysReplica() throws {
    let primary = PostgresServer.primary()
    defer { primary.stop() }
    let s = Sandbox()
    #expect(s.run(["append", "on the primary"], environment: ["MSGLOG_DB": primary.url]).code == 0)
    let standby = PostgresServer.standby(of: primary)
    defer { standby.stop() }
    let onPrimary = try ServedLog.running(s, environment: ["MSGLOG_DB": primary.url])
    var r = Operations.curl(onPrimary.url! + "/readyz", [], in: s.dir)
    #expect(r.status == 200 && r.body == #"{"status":"ok"}"#, "\(r)")
    #expect(onPrimary.stop().code == 0)

    let server = try ServedLog.running(s, environment: ["MSGLOG_DB": standby.url])
    let url = server.url!
    r = Operations.curl(url + "/readyz", [], in: s.dir)
    #expect(r.status == 200 && r.body == #"{"status":"ok","replica":true}"#, "\(r)")
    #expect(primary.control("crash") == 0)
    r = Operations.curl(url + "/readyz", [], in: s.dir)
    #expect(r.status == 200 && r.body == #"{"status":"ok","replica":true}"#, "a standby without its primary: \(r)")
    r = Operations.curl(url + "/api/items", [], in: s.dir)
    #expect(r.status == 200 && r.body.contains("on the primary"), "\(r)")
    #expect(server.stop().code == 0)
  }

  // MARK: - Metrics

  /// 16 clients append 10 messages each at once; then /metrics passes
  /// `promtool check metrics`, and prometheus-client's parser reads the
  /// head seq, the appended events, the requests by method, route and
  /// code, and commit batches that hold every write once and none more
  /// than 16 (there were never more than 16 writes in flight).
  @Test func metricsPassPromtoolAndCountWhatHappened() throws {
    let s = Sandbox()
    let server = try ServedLog.running(s, ["--token", Self.token])
    let url = server.url!
    let (clients, each) = (16, 10)
    let body = s.dir + "/append.json"
    try Data(#"{"text":"hello"}"#.utf8).write(to: URL(fileURLWithPath: body))
    let statuses = Mutex<[Int]>([])
    onThreads(clients) { _ in
      var arguments: [String] = []
      for i in 0..<each {
        if i > 0 { arguments.append("--next") }
        arguments += [
          "-s", "-o", "/dev/null", "-w", "%{http_code}\n", "-H", Self.bearer, "-H", "Content-Type: application/json",
          "--data-binary", "@" + body, url + "/api/append",
        ]
      }
      let run = runProgram("/usr/bin/curl", arguments)
      statuses.withLock { $0 += run.stdout.split(separator: "\n").compactMap { Int($0) } }
    }
    #expect(statuses.withLock { $0 } == Array(repeating: 200, count: clients * each))
    for _ in 0..<3 { #expect(Operations.curl(url + "/api/items", ["-H", Self.bearer], in: s.dir).status == 200) }
    #expect(Operations.curl(url + "/api/items", [], in: s.dir).status == 401)
    #expect(Operations.curl(url + "/nothing-here", ["-H", Self.bearer], in: s.dir).status == 404)
    #expect(Operations.curl(url + "/metrics", [], in: s.dir).status == 401, "/metrics needs the token")
    let scrape = Operations.curl(url + "/metrics", ["-H", Self.bearer], in: s.dir)
    #expect(scrape.status == 200 && scrape.headers["content-type"] == "text/plain; version=0.0.4; charset=utf-8")
    _ = server.stop()

    let promtool = runProgram("/usr/bin/promtool", ["check", "metrics"], stdin: Data(scrape.body.utf8))
    #expect(promtool.code == 0 && promtool.stdout.isEmpty && promtool.stderr.isEmpty, "\(promtool)")

    let samples = try Samples(scrape.body, in: s.dir)
    let writes = Double(clients * each)
    #expect(samples.value("msglog_head_seq") == writes)
    #expect(samples.value("msglog_events_appended_total") == writes)
    func requests(_ method: String, _ route: String, _ code: String) -> Double? {
      samples.value("msglog_http_requests_total", ["method": method, "route": route, "code": code])
    }
    #expect(requests("POST", "/api/append", "200") == writes)
    #expect(requests("GET", "/api/items", "200") == 3)
    #expect(requests("GET", "/api/items", "401") == 1)
    #expect(requests("GET", "none", "404") == 1, "an unknown path is counted as route none")
    #expect(requests("GET", "/metrics", "401") == 1)
    #expect(samples.value("msglog_http_request_duration_seconds_count", ["route": "/api/append"]) == writes)
    // Every write in exactly one transaction, and none with more than the 16 in flight.
    let batches = try #require(samples.value("msglog_commit_batch_size_count"))
    #expect(samples.value("msglog_commit_batch_size_sum") == writes)
    #expect(batches >= 1 && batches <= writes)
    #expect(samples.value("msglog_commit_batch_size_bucket", ["le": "16"]) == batches)
    #expect(samples.value("msglog_commit_batch_size_bucket", ["le": "+Inf"]) == batches)
    #expect(samples.value("msglog_commit_duration_seconds_count") == batches)
    #expect(samples.value("msglog_followers") == 0)
    for result in ["applied", "duplicate", "rebased", "refused"] {
      #expect(samples.value("msglog_sync_changes_total", ["result": result]) == 0)
    }
    let started = try #require(samples.value("process_start_time_seconds"))
    #expect(started <= Date().timeIntervalSince1970 && started > Date().timeIntervalSince1970 - 3600)
    #expect((samples.value("process_resident_memory_bytes") ?? 0) > 0)
    #expect((samples.value("process_open_fds") ?? 0) > 0)
    #expect(samples.value("process_cpu_seconds_total") != nil)
  }

  /// A real Prometheus server, started here on a free port with a scrape
  /// configuration pointing at serve (with the token), sees its target up
  /// and reads the head seq it scraped.
  @Test func aPrometheusServerScrapesIt() throws {
    let s = Sandbox()
    let server = try ServedLog.running(s, ["--token", Self.token])
    defer { _ = server.stop() }
    for text in ["a", "b", "c"] { #expect(server.request("POST", "/api/append", #"{"text":"\#(text)"}"#, headers: [Self.bearer]).status == 200) }
    let template = try String(contentsOfFile: repositoryRoot + "/Tests/Operations/prometheus.yml.template", encoding: .utf8)
    let config = s.dir + "/prometheus.yml"
    try template.replacing("TOKEN", with: Self.token).replacing("TARGET", with: "127.0.0.1:\(server.port)")
      .write(toFile: config, atomically: true, encoding: .utf8)
    let port = Operations.freePort()
    let prometheus = s.start(
      [
        "--config.file=" + config, "--storage.tsdb.path=" + s.dir + "/tsdb", "--web.listen-address=127.0.0.1:\(port)",
        "--log.level=warn",
      ], useDefaultDB: false, runner: "/usr/bin/prometheus")
    defer {
      if prometheus.process.isRunning { kill(prometheus.process.processIdentifier, SIGTERM) }
      _ = prometheus.finish()
    }
    let api = "http://127.0.0.1:\(port)/api/v1"
    var health = ""
    var head = ""
    // A watchdog only: Prometheus scrapes every second once it has started.
    for _ in 0..<480 where prometheus.process.isRunning {
      let targets = Operations.curl(api + "/targets", [], in: s.dir)
      if let object = try? JSONSerialization.jsonObject(with: Data(targets.body.utf8)) as? [String: Any],
        let data = object["data"] as? [String: Any], let active = data["activeTargets"] as? [[String: Any]],
        let first = active.first
      {
        health = first["health"] as? String ?? ""
        if health == "up" {
          let query = Operations.curl(api + "/query?query=msglog_head_seq", [], in: s.dir)
          if let object = try? JSONSerialization.jsonObject(with: Data(query.body.utf8)) as? [String: Any],
            let data = object["data"] as? [String: Any], let result = data["result"] as? [[String: Any]],
            let value = result.first?["value"] as? [Any], value.count == 2
          {
            head = value[1] as? String ?? ""
            break
          }
        }
      }
      usleep(250_000)
    }
    #expect(health == "up", "the target's health")
    #expect(head == "3", "msglog_head_seq as Prometheus scraped it")
  }

  // MARK: - The API's description

  /// schemathesis, driven by /api/openapi.json against a live server with
  /// the token, finds no 5xx, no status, content type or body outside the
  /// document; and the server logged no error of its own meanwhile.
  @Test func schemathesisFindsNoAnswerOutsideTheDocument() throws {
    let s = Sandbox()
    s.append("seed")
    let server = try ServedLog.running(s, ["--token", Self.token])
    let url = server.url!
    let st = Operations.venv + "/bin/st"
    let run = runProgram(
      "/bin/sh",
      [
        "-c", "cd \"$0\" && exec \"$@\"", s.dir, st, "run", url + "/api/openapi.json", "-H", Self.bearer,
        "--checks",
        "not_a_server_error,status_code_conformance,content_type_conformance,response_schema_conformance",
        "--phases", "examples,fuzzing", "--max-examples", "15", "--seed", "28", "--generation-database", "none",
        "--request-timeout", "10", "--workers", "1", "--no-color",
      ])
    let served = server.stop()
    #expect(run.code == 0, "\(run.stdout.suffix(6000))\n\(run.stderr.suffix(2000))")
    #expect(run.stdout.contains("Tested:"), "\(run.stdout.suffix(2000))")
    #expect(!served.stderr.contains("msglog: error:"), "\(served.stderr.suffix(4000))")
  }

  // MARK: - TLS

  /// HTTPS with a throwaway self-signed certificate made here: curl with
  /// `--cacert` reads and writes, without it refuses the certificate (curl's
  /// exit 60), and plain HTTP to the port gets a plain 400 that says to
  /// use https:// — after which the port still speaks TLS.
  @Test func servesHTTPSWithItsCertificate() throws {
    let s = Sandbox()
    let (cert, key) = (s.dir + "/cert.pem", s.dir + "/key.pem")
    let made = runProgram(
      "/usr/bin/openssl",
      [
        "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", key, "-out", cert, "-days", "1", "-subj",
        "/CN=127.0.0.1", "-addext", "subjectAltName=IP:127.0.0.1,DNS:localhost",
      ])
    try #require(made.code == 0, "\(made)")
    let server = try ServedLog.running(s, ["--tls-cert", cert, "--tls-key", key, "--token", Self.token])
    let url = server.url!
    #expect(url.hasPrefix("https://127.0.0.1:"), "\(url)")
    let trusted = ["--cacert", cert, "-H", Self.bearer]
    var r = Operations.curl(url + "/livez", ["--cacert", cert], in: s.dir)
    #expect(r.status == 200 && r.body == #"{"status":"ok"}"#, "\(r)")
    r = Operations.curl(
      url + "/api/append", trusted + ["-H", "Content-Type: application/json", "--data-binary", #"{"text":"over tls"}"#],
      in: s.dir)
    #expect(r.status == 200, "\(r)")
    r = Operations.curl(url + "/api/items", trusted, in: s.dir)
    #expect(r.status == 200 && r.body.contains("over tls"), "\(r)")

    let untrusted = runProgram("/usr/bin/curl", ["-s", "-o", "/dev/null", url + "/livez"])
    #expect(untrusted.code == 60, "curl refuses a certificate it cannot verify: \(untrusted)")
    let plain = Operations.curl(
      "http://127.0.0.1:\(server.port)/livez", ["--max-time", "10", "-H", "X-Request-ID: plain-1"], in: s.dir)
    #expect(plain.status == 400 && plain.body.contains("https://"), "\(plain)")
    #expect(plain.headers["x-request-id"] == "plain-1" && plain.headers["connection"] == "close", "\(plain)")
    r = Operations.curl(url + "/readyz", ["--cacert", cert], in: s.dir)
    #expect(r.status == 200, "still TLS after a plain request: \(r)")
    // The plain request is one of the server's, in the metrics and the request log (issue 35.6).
    let scrape = Operations.curl(url + "/metrics", ["--cacert", cert, "-H", Self.bearer], in: s.dir)
    #expect(scrape.body.contains(#"msglog_http_requests_total{method="GET",route="/livez",code="400"} 1"#), "\(scrape)")

    let run = server.stop()
    #expect(run.code == 0, "\(run)")
    #expect(!run.stderr.contains("without TLS"), "\(run.stderr)")
    #expect(run.stderr.contains(" GET /api/items 200 "), "\(run.stderr)")
    #expect(run.stderr.contains(" plain-1 127.0.0.1 - GET /livez 400 "), "\(run.stderr)")
    #expect(!run.stderr.contains(Self.token) && !run.stderr.contains("over tls"), "\(run.stderr)")
  }

  /// --tls-cert and --tls-key go together, and name readable PEM files.
  @Test func tlsOptionsAreChecked() throws {
    let s = Sandbox()
    var r = s.run(["serve", "--listen", "127.0.0.1:0", "--tls-cert", s.dir + "/cert.pem"])
    #expect(r.code == 64 && r.stderr.hasPrefix("msglog: --tls-cert needs --tls-key"), "\(r)")
    r = s.run(["serve", "--listen", "127.0.0.1:0", "--tls-key", s.dir + "/key.pem"])
    #expect(r.code == 64 && r.stderr.hasPrefix("msglog: --tls-key needs --tls-cert"), "\(r)")
    r = s.run(["serve", "--listen", "127.0.0.1:0", "--tls-cert", s.dir + "/none.pem", "--tls-key", s.dir + "/none.pem"])
    #expect(r.code != 0 && r.stderr.hasPrefix("msglog: ") && r.stderr.contains("none.pem"), "\(r)")
  }

  /// A token served in clear beyond loopback gets a warning at start; on
  /// loopback, or with TLS, none.
  @Test func aTokenInClearBeyondLoopbackIsWarnedOf() throws {
    let s = Sandbox()
    var server = try ServedLog.running(s, ["--token", Self.token], listen: "0.0.0.0:0")
    var run = server.stop()
    #expect(run.stderr.contains("msglog: warn: listening on 0.0.0.0:"), "\(run)")
    #expect(run.stderr.contains("without TLS: the token and every message travel in clear"), "\(run)")
    #expect(!run.stderr.contains(Self.token), "\(run)")
    server = try ServedLog.running(s, ["--token", Self.token])
    run = server.stop()
    #expect(!run.stderr.contains("warn"), "loopback: \(run)")
  }
}

/// The samples prometheus-client's parser read (Tests/Operations/read_metrics.py).
struct Samples {
  struct Sample {
    var name: String
    var labels: [String: String]
    var value: Double
  }

  let all: [Sample]

  init(_ exposition: String, in dir: String) throws {
    let file = dir + "/metrics.txt"
    try exposition.write(toFile: file, atomically: true, encoding: .utf8)
    let run = Operations.python("read_metrics.py", [file])
    try #require(run.code == 0, "prometheus-client's parser: \(run)")
    all = try run.stdout.split(separator: "\n").map { line in
      let object = try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
      return Sample(
        name: object["name"] as! String, labels: object["labels"] as! [String: String],
        value: (object["value"] as! NSNumber).doubleValue)
    }
  }

  /// The value of the sample named so whose labels include `labels`.
  func value(_ name: String, _ labels: [String: String] = [:]) -> Double? {
    all.first { sample in sample.name == name && labels.allSatisfy { sample.labels[$0.key] == $0.value } }?.value
  }
}
