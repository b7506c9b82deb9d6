import Foundation
import MsglogTestSupport
import Testing

#if canImport(Glibc)
  import Glibc
#endif

/// docs/POSTGRES.md's team recipe, run as it is written (issue 35.3): every
/// block marked `recipe:` is read from the document and run in order —
/// the superuser's SQL with psql, the owner's `msglog init` and grants,
/// the systemd unit checked with `systemd-analyze verify` and its
/// `ExecStart` run twice (one `serve` per port, as `msglog_serve`, its
/// password from `PGPASSFILE`), nginx with TLS in front of both, the
/// page's first push through it, Prometheus's scrape config checked and
/// each node's metrics read, `verify` as the viewer, `pg_dump` as the
/// owner, and a leaver dropped — with only `substitutions` put in for the
/// test's own host, ports and paths.
@Suite(.serialized) struct TeamRecipeTests {
  static let document = "docs/POSTGRES.md"
  /// The recipe's roles and database, global in the cluster: dropped
  /// before (a run that died) and after.
  static let roles = ["ann", "viewer", "msglog_serve", "team_readers", "team_writers", "team_owner"]

  static func dropTheTeam() {
    PostgresCluster.dropDatabase("team")
    for role in roles { PostgresCluster.dropRole(role) }
  }

  /// What the test puts in for the document's own, each named once.
  struct Place {
    let dir: String
    let postgres = PostgresCluster.hostPort
    let nodes = [Operations.freePort(), Operations.freePort()]
    let https = Operations.freePort()
    var origin: String { "https://chat.example.org:\(https)" }
    /// Made by `Nginx.certificate(for:in:)`.
    var certificate: String { dir + "/chat.example.org.pem" }
    var key: String { dir + "/chat.example.org.key" }

    var substitutions: [(String, String)] {
      [
        ("db.example.org:5432", postgres), ("db.example.org", postgres),
        ("/usr/local/bin/msglog", Sandbox.binary),
        ("/etc/msglog/pgpass", dir + "/pgpass"), ("/etc/msglog/env", dir + "/env"),
        ("/etc/prometheus/msglog-token", dir + "/token"),
        ("/etc/ssl/certs/chat.example.org.pem", certificate), ("/etc/ssl/private/chat.example.org.key", key),
        ("127.0.0.1:8081", "127.0.0.1:\(nodes[0])"), ("127.0.0.1:8082", "127.0.0.1:\(nodes[1])"),
        ("listen 443 ssl", "listen 127.0.0.1:\(https) ssl"),
        ("https://chat.example.org", origin),
      ]
    }

    func put(_ text: String) -> String {
      substitutions.reduce(text) { $0.replacing($1.0, with: $1.1) }
    }

    /// A script of the document's, run with bash in the test's directory,
    /// the built msglog first on PATH and every pgpass line of the recipe
    /// in PGPASSFILE (as each person's ~/.pgpass would hold theirs).
    func bash(_ script: String) -> Run {
      let path = URL(fileURLWithPath: Sandbox.binary).deletingLastPathComponent().path
      return runProgram(
        "/usr/bin/env",
        [
          "-C", dir, "PGPASSFILE=\(dir)/pgpass", "PATH=\(path):/usr/bin:/bin", "/bin/bash", "-euo", "pipefail", "-c",
          script,
        ])
    }

    /// SQL as `role` in database team, its password from PGPASSFILE, fed
    /// to psql as a file is (a statement at a time, as typed into it).
    func psql(as role: String, _ sql: String) -> Run {
      bash("psql -qAt -v ON_ERROR_STOP=1 'postgres://\(role)@\(postgres)/team' <<'SQL'\n\(sql)SQL\n")
    }

    /// SQL as the cluster's superuser in `database`, likewise.
    func superuser(in database: String, _ sql: String) -> Run {
      bash("psql -qAt -v ON_ERROR_STOP=1 '\(PostgresCluster.server)/\(database)' <<'SQL'\n\(sql)SQL\n")
    }
  }

  @Test func theTeamRecipeRunsAsWritten() throws {
    let blocks = DocumentBlock.marked("recipe", in: Self.document)
    let steps = blocks.map { "\($0.language) \($0.label)" }
    try #require(
      steps == [
        "sql superuser@postgres", "text pgpass", "text pgpass", "sh owner", "sql owner", "ini systemd", "text env",
        "nginx nginx", "yaml prometheus", "sh viewer", "sh owner", "sql superuser@team",
      ], "the recipe's blocks are not the ones this test runs: \(steps)")
    Self.dropTheTeam()
    defer { Self.dropTheTeam() }
    let s = Sandbox()
    let place = Place(dir: s.dir)
    func block(_ n: Int) -> String { place.put(blocks[n].text) }

    // 1. Roles and the database, as a superuser.
    var r = place.superuser(in: String(blocks[0].label.split(separator: "@").last!), block(0))
    #expect(r.code == 0, "\(r)")
    // 2. The passwords, in a password file of mode 600.
    _ = FileManager.default.createFile(
      atPath: s.dir + "/pgpass", contents: Data((block(1) + block(2)).utf8), attributes: [.posixPermissions: 0o600])
    // 3. The schema, as its owner: every table, owned by it.
    r = place.bash(block(3))
    #expect(r.code == 0 && r.stdout == "created an empty log in postgres://team_owner@\(place.postgres)/team\n", "\(r)")
    // 4. The grants and default privileges, as the owner.
    r = place.psql(as: "team_owner", block(4))
    #expect(r.code == 0, "\(r)")

    // 5. The unit: systemd's own check, then its ExecStart, once per port.
    let unit = block(5)
    let instances = place.nodes.map { unit.replacing("%i", with: String($0)) }
    if FileManager.default.isExecutableFile(atPath: "/usr/bin/systemd-analyze") {
      let file = s.dir + "/msglog-serve@\(place.nodes[0]).service"
      _ = FileManager.default.createFile(atPath: file, contents: Data(unit.utf8))
      r = runProgram("/usr/bin/systemd-analyze", ["verify", file])
      #expect(r.code == 0, "systemd-analyze verify: \(r)")
    }
    _ = FileManager.default.createFile(atPath: s.dir + "/env", contents: Data(block(6).utf8))
    let token = try #require(block(6).split(separator: "\n").first { $0.hasPrefix("MSGLOG_TOKEN=") })
      .dropFirst("MSGLOG_TOKEN=".count)
    _ = FileManager.default.createFile(atPath: s.dir + "/token", contents: Data(token.utf8))
    let servers = instances.map { Self.serve(unit: $0, in: s) }
    defer { for server in servers { #expect(server.stop().code == 0) } }
    for (server, port) in zip(servers, place.nodes) {
      try #require(server.url == "http://127.0.0.1:\(port)", "the unit's serve did not start: \(server.stop())")
    }

    // 6. nginx with TLS in front of both.
    try #require(Nginx.isInstalled, "nginx is not installed: scripts/setup --test")
    _ = try Nginx.certificate(for: "chat.example.org", in: s.dir)
    let nginx = try Nginx(config: block(7), in: s)
    defer { nginx.stop() }
    let curl = ["--cacert", place.certificate, "--resolve", "chat.example.org:\(place.https):127.0.0.1"]
    let bearer = ["-H", "Authorization: Bearer \(token)"]
    try nginx.waitUntilServing(place.origin + "/livez", curl: curl)
    var e = Operations.curl(place.origin + "/", curl, in: s.dir)
    #expect(e.status == 200 && e.body.contains("<html"), "\(e)")
    // The page's first change, as its outbox sends it, through nginx.
    e = Self.pagePush(place, curl: curl + bearer, text: "through nginx")
    #expect(e.status == 200 && e.body.contains(#""result":"applied""#), "\(e)")
    // A write from another origin is still refused.
    e = Operations.curl(
      place.origin + "/api/append",
      curl + bearer + [
        "-H", "Origin: https://evil.example.org", "-H", "Content-Type: application/json", "-d", #"{"text":"x"}"#,
      ],
      in: s.dir)
    #expect(e.status == 403, "\(e)")
    for n in 0..<8 { _ = Operations.curl(place.origin + "/api/streams?n=\(n)", curl + bearer, in: s.dir) }

    // 7. Metrics: Prometheus's config is sound; each node counts its own requests.
    let scrape = s.dir + "/prometheus.yml"
    _ = FileManager.default.createFile(atPath: scrape, contents: Data(block(8).utf8))
    if FileManager.default.isExecutableFile(atPath: "/usr/bin/promtool") {
      r = runProgram("/usr/bin/promtool", ["check", "config", scrape])
      #expect(r.code == 0, "promtool: \(r)")
    }
    for port in place.nodes {
      let metrics = Operations.curl("http://127.0.0.1:\(port)/metrics", bearer, in: s.dir)
      #expect(metrics.status == 200 && metrics.body.contains(#"route="/api/streams""#), "node \(port): \(metrics)")
    }

    // 8. Looking after it: verify as the viewer, pg_dump as the owner, a leaver.
    r = place.bash(block(9))
    #expect(r.code == 0 && r.stdout == "ok: 1 event, 1 stream, 1 live item\n", "\(r)")
    r = place.bash(block(10))
    #expect(r.code == 0 && FileManager.default.fileExists(atPath: s.dir + "/team.sql"), "\(r)")
    r = place.superuser(in: String(blocks[11].label.split(separator: "@").last!), block(11))
    #expect(r.code == 0, "\(r)")
    let tables = PostgresCluster.psql(
      "SELECT count(*), string_agg(DISTINCT tableowner, ',') FROM pg_tables WHERE schemaname = 'msglog'",
      database: "team")
    #expect(tables.stdout == "9|team_owner\n", "\(tables)")
    e = Self.pagePush(place, curl: curl + bearer, text: "after ann left")
    #expect(e.status == 200 && e.body.contains(#""result":"applied""#), "\(e)")
    r = place.bash(block(9))
    #expect(r.code == 0 && r.stdout == "ok: 2 events, 1 stream, 2 live items\n", "\(r)")
  }

  /// The unit's `ExecStart`, as systemd would run it: with its
  /// `Environment=` and `EnvironmentFile=` (no shell: plain words).
  static func serve(unit: String, in s: Sandbox) -> ServedLog {
    var environment: [String: String] = [:]
    var command = ""
    for line in unit.split(separator: "\n") {
      if line.hasPrefix("Environment=") {
        let pair = line.dropFirst("Environment=".count).split(separator: "=", maxSplits: 1)
        environment[String(pair[0])] = String(pair[1])
      } else if line.hasPrefix("EnvironmentFile=") {
        let file = String(line.dropFirst("EnvironmentFile=".count))
        for entry in ((try? String(contentsOfFile: file, encoding: .utf8)) ?? "").split(separator: "\n") {
          let pair = entry.split(separator: "=", maxSplits: 1)
          environment[String(pair[0])] = String(pair[1])
        }
      } else if line.hasPrefix("ExecStart=") {
        command = String(line.dropFirst("ExecStart=".count))
      }
    }
    let words = command.split(separator: " ").map(String.init)
    precondition(words.first == Sandbox.binary && words.dropFirst().contains("serve"), "ExecStart: \(command)")
    return ServedLog(s, arguments: Array(words.dropFirst()), environment: environment)
  }

  /// The page's first change, as its outbox sends it: hello for the log's
  /// id, then one append pushed under a new replica id, from the page's
  /// own origin.
  static func pagePush(_ place: Place, curl: [String], text: String) -> Operations.Exchange {
    let hello = Operations.curl(place.origin + "/api/sync?protocol=1", curl, in: place.dir)
    guard hello.status == 200,
      let object = try? JSONSerialization.jsonObject(with: Data(hello.body.utf8)) as? [String: Any],
      let log = object["log"] as? String, let head = object["head"] as? Int
    else { return hello }
    let change =
      #"{"change":1,"made":"2026-12-01T09:14:03.120Z","basis":\#(head),"op":"append","stream":"chat","id":"\#(UUID().uuidString.lowercased())","text":"\#(text)","seen":0}"#
    // A new replica id and its secret (64 hex digits), as the page's outbox makes them.
    let secret = (0..<32).map { _ in String(format: "%02x", UInt8.random(in: 0...255)) }.joined()
    let body =
      #"{"protocol":1,"log":"\#(log)","replica":"\#(UUID().uuidString.lowercased())","secret":"\#(secret)","changes":[\#(change)]}"#
    return Operations.curl(
      place.origin + "/api/sync/push",
      curl + ["-H", "Origin: \(place.origin)", "-H", "Content-Type: application/json", "--data-binary", body],
      in: place.dir)
  }
}
