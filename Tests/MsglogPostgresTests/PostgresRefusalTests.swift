import Foundation
import MsglogTestSupport
import Testing

#if canImport(Glibc)
  import Glibc
#endif

/// What msglog says — the words, the exit code, serve's status — when
/// PostgreSQL refuses: a privilege the role lacks (named, 403), a read-only
/// role (no LMDB advice), a `msglog.meta` that is not msglog's (409), a
/// follower's dropped connection (named by its location, with a follower's
/// hint). Each refusal changes nothing.
@Suite(.serialized) struct PostgresRefusalTests {
  static let password = "role-password"
  static let guide = "(docs/POSTGRES.md, \"The team recipe\", lists what readers and writers need)\n"
  /// What `role` lacks, and the GRANTs that mend it, as the server told
  /// them: `privileges` on every table (and USAGE on the schema, unless `usage`).
  static func lacks(_ role: String, _ privileges: String, usage: Bool = false) -> (String, String) {
    let listed = privileges.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }
    let words = listed.count > 1 ? listed.dropLast().joined(separator: ", ") + " and " + listed.last! : listed[0]
    let onTables = "\(words) on every table of schema msglog"
    let grantTables = "GRANT \(privileges) ON ALL TABLES IN SCHEMA msglog TO \(role)"
    if usage { return ("\(role) lacks \(onTables)", grantTables) }
    return (
      "\(role) lacks USAGE on schema msglog; \(onTables)", "GRANT USAGE ON SCHEMA msglog TO \(role); \(grantTables)"
    )
  }
  static func hint(_ grants: String, role: String) -> String {
    "hint: if this role is to have it, the owner of schema msglog grants it with \(grants) "
      + "(or to a group \(role) is in; " + guide.dropFirst()
  }

  static func name(of s: Sandbox) -> String { s.databaseName! }

  /// What `serve` of `url` prints when it refuses to start (it must, within 30 s).
  static func refusedToServe(_ s: Sandbox, _ url: String) -> Run {
    s.start(["--db", url, "serve", "--listen", "127.0.0.1:0"], useDefaultDB: false).finish(endingAfter: 30)
  }

  /// serve's status for a read and a write, with what it printed.
  static func served(_ s: Sandbox, _ url: String) -> (read: ServedLog.Reply, write: ServedLog.Reply) {
    let server = ServedLog(s, ["--db", url], useDefaultDB: false)
    let read = server.request("GET", "/api/items?stream=main")
    let write = server.request("POST", "/api/append", #"{"text":"refused"}"#)
    #expect(server.stop().code == 0)
    return (read, write)
  }

  /// A replica of a `postgres://` log reached through a role that may only
  /// read, with a change pending: the push is refused whole by the
  /// database, and the pull goes on (an erase there must reach the
  /// replica), then the sync fails with the refusal, the change pending.
  @Test func aReplicaWhoseRoleMayOnlyReadStillPulls() throws {
    let role = PostgresCluster.createRole(password: Self.password)
    defer { PostgresCluster.dropRole(role) }
    let s = Sandbox(.postgres)
    let secret = s.append("SENTINEL-ERASED-THERE")
    let database = Self.name(of: s)
    let grants = "GRANT USAGE ON SCHEMA msglog TO \(role); GRANT SELECT ON ALL TABLES IN SCHEMA msglog TO \(role)"
    #expect(PostgresCluster.psql(grants, database: database).code == 0)
    let url = "postgres://\(role):\(Self.password)@\(PostgresCluster.hostPort)/\(database)"
    let replica = Sandbox()
    var r = replica.run(["clone", url])
    #expect(r.code == 0, "\(r)")
    #expect(replica.run(["append", "pending"]).code == 0)
    #expect(s.run(["erase", secret, "--purge"]).code == 0)
    let before = s.contents()
    r = replica.run(["sync"])
    #expect(r.code == 1 && r.stderr.contains("refused this replica's changes: "), "\(r)")
    #expect(r.stderr.contains("hint: what the remote holds was pulled all the same"), "\(r)")
    #expect(s.contents() == before)
    #expect(replica.export() == s.export())
    #expect(replica.run(["status"]).stdout.contains("pending  1\n"))
    #expect(replica.run(["list"]).stdout.contains("pending"))
  }

  @Test func aMissingPrivilegeIsNamedAndIs403() throws {
    let role = PostgresCluster.createRole(password: Self.password)
    defer { PostgresCluster.dropRole(role) }
    do {
      let s = Sandbox(.postgres)
      s.append("seed")
      let database = Self.name(of: s)
      let url = "postgres://\(role):\(Self.password)@\(PostgresCluster.hostPort)/\(database)"
      let shown = "postgres://\(role)@\(PostgresCluster.hostPort)/\(database)"
      let before = s.contents()

      // No USAGE on schema msglog: a read is refused for that privilege, not
      // as a read-only database, naming what the role lacks and the GRANTs.
      let (readingLacks, readingGrants) = Self.lacks(role, "SELECT")
      for args in [["list"], ["log"], ["streams"], ["export"], ["verify"], ["log", "--follow"]] {
        let r = s.run(["--db", url] + args, useDefaultDB: false)
        #expect(r.code == 1 && r.stdout.isEmpty, "\(args): \(r)")
        #expect(
          r.stderr
            == "msglog: cannot read \(shown): permission denied for schema msglog (\(readingLacks))\n"
            + Self.hint(readingGrants, role: role), "\(args): \(r)")
      }
      let (writingLacks, writingGrants) = Self.lacks(role, "SELECT, INSERT, UPDATE, DELETE")
      for (args, stdin) in [(["append", "x"], ""), (["import"], #"{"op":"append","text":"x"}"#)] {
        let r = s.run(["--db", url] + args, stdin: Data(stdin.utf8), useDefaultDB: false)
        #expect(
          r.code == 1 && r.stdout.isEmpty
            && r.stderr
              == "msglog: cannot write to \(shown): permission denied for schema msglog (\(writingLacks))\n"
              + Self.hint(writingGrants, role: role),
          "\(args): \(r)")
      }
      var replies = Self.served(s, url)
      #expect(
        replies.read.status == 403 && replies.read.body.contains("permission denied for schema msglog"), "\(replies)")
      #expect(replies.write.status == 403 && replies.write.body.contains(writingLacks), "\(replies)")
      #expect(s.contents() == before, "a refusal changed the database")

      // A reader (USAGE, SELECT): its write names the table and what writing lacks.
      #expect(
        PostgresCluster.psql(
          "GRANT USAGE ON SCHEMA msglog TO \(role); GRANT SELECT ON ALL TABLES IN SCHEMA msglog TO \(role)",
          database: database
        ).code == 0)
      #expect(s.run(["--db", url, "list"], useDefaultDB: false).stdout.contains("seed"))
      var r = s.run(["--db", url, "append", "x"], useDefaultDB: false)
      #expect(
        r.code == 1
          && r.stderr
            == "msglog: cannot write to \(shown): permission denied for table head "
            + "(\(Self.lacks(role, "INSERT, UPDATE, DELETE", usage: true).0))\n"
            + Self.hint(Self.lacks(role, "INSERT, UPDATE, DELETE", usage: true).1, role: role),
        "\(r)")
      replies = Self.served(s, url)
      #expect(replies.read.status == 200 && replies.write.status == 403, "\(replies)")
      #expect(s.contents() == before, "a refusal changed the database")

      // Every privilege, but read-only by the role's default: a server's words, not LMDB's.
      #expect(
        PostgresCluster.psql(
          "GRANT INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA msglog TO \(role); "
            + "ALTER ROLE \(role) IN DATABASE \(database) SET default_transaction_read_only = on",
          database: database
        ).code == 0)
      r = s.run(["--db", url, "append", "x"], useDefaultDB: false)
      #expect(
        r.code == 1
          && r.stderr
            == "msglog: cannot write to \(shown): it is read-only (cannot execute SELECT FOR UPDATE in a read-only transaction)\n"
            + "hint: every read command still works; writes need a primary server and a role without default_transaction_read_only\n",
        "\(r)")
      replies = Self.served(s, url)
      #expect(replies.read.status == 200 && replies.write.status == 403, "\(replies)")
      #expect(s.contents() == before, "a refusal changed the database")
    }
  }

  /// The database refusing serve's writes (a database or role set to
  /// read-only; a missing privilege is the same path) is the operator's to
  /// fix: the request log says `refused=store`, `msglog_refusals_total`
  /// counts it so, and a warn line says what the database said — an
  /// operator's attack pass found such 403s logged as `refused=policy`,
  /// the browser's rules, with no line.
  @Test func theDatabasesRefusalIsLoggedAsTheStores() throws {
    let s = Sandbox(.postgres)
    s.append("seed")
    let database = Self.name(of: s)
    #expect(
      PostgresCluster.psql("ALTER DATABASE \"\(database)\" SET default_transaction_read_only = on").code == 0)
    let server = ServedLog(s, ["--db", s.db], useDefaultDB: false)
    let write = server.request("POST", "/api/append", #"{"text":"refused"}"#)
    #expect(write.status == 403 && write.body.contains("read-only"), "\(write)")
    let metrics = server.request("GET", "/metrics")
    #expect(metrics.body.contains(#"msglog_refusals_total{reason="store"} 1"#), "\(metrics.body)")
    let run = server.stop()
    #expect(run.code == 0)
    #expect(run.stderr.contains("POST /api/append 403") && run.stderr.contains("refused=store"), "\(run.stderr)")
    #expect(!run.stderr.contains("refused=policy"), "\(run.stderr)")
    #expect(run.stderr.contains("msglog: warn: POST /api/append: cannot write to "), "\(run.stderr)")
  }

  /// The first write creates schema msglog: without CREATE on the database
  /// it is refused naming that privilege, and nothing is created.
  @Test func aFirstWriteWithoutCreateNamesIt() throws {
    let role = PostgresCluster.createRole(password: Self.password)
    defer { PostgresCluster.dropRole(role) }
    do {
      let s = Sandbox(.postgres)
      let database = Self.name(of: s)
      let url = "postgres://\(role):\(Self.password)@\(PostgresCluster.hostPort)/\(database)"
      let shown = "postgres://\(role)@\(PostgresCluster.hostPort)/\(database)"
      for (args, stdin) in [(["append", "x"], ""), (["import"], #"{"op":"append","text":"x"}"#)] {
        let r = s.run(["--db", url] + args, stdin: Data(stdin.utf8), useDefaultDB: false)
        #expect(
          r.code == 1 && r.stdout.isEmpty
            && r.stderr
              == "msglog: cannot write to \(shown): permission denied for database \(database) "
              + "(\(role) lacks CREATE on database \(database), where the first write makes schema msglog)\n"
              + "hint: the database's owner grants it with GRANT CREATE ON DATABASE \(database) TO \(role), "
              + "or makes the log first with 'msglog init' " + Self.guide,
          "\(args): \(r)")
        #expect(s.isEmpty, "\(args) created msglog's tables")
      }
      let replies = Self.served(s, url)
      #expect(
        replies.write.status == 403 && replies.write.body.contains("lacks CREATE on database \(database)"), "\(replies)"
      )
      #expect(replies.read.status == 404, "\(replies)")
      #expect(s.isEmpty)
    }
  }

  /// A schema named msglog whose meta table is shaped otherwise (or names
  /// no msglog format) belongs to something else: "not a msglog database",
  /// 409 from serve, and nothing written.
  @Test(arguments: [
    "CREATE TABLE msglog.meta (x int)", "CREATE TABLE msglog.meta (key int, value int)",
    "CREATE TABLE msglog.meta (key text, value text); INSERT INTO msglog.meta VALUES ('format', 'other')",
  ])
  func aForeignMetaTableIsNotMsglogs(_ table: String) throws {
    let other = PostgresCluster.createDatabase()
    defer { PostgresCluster.dropDatabase(other.name) }
    #expect(PostgresCluster.psql("CREATE SCHEMA msglog; \(table)", database: other.name).code == 0)
    let shown = "postgres://msglog@\(PostgresCluster.hostPort)/\(other.name)"
    func snapshot() -> String {
      PostgresCluster.psql(
        "SELECT string_agg(table_name, ',' ORDER BY table_name) FROM information_schema.tables WHERE table_schema = 'msglog'; "
          + "SELECT count(*) FROM msglog.meta", database: other.name
      ).stdout
    }
    let before = snapshot()
    let s = Sandbox()
    for (args, stdin) in [
      (["list"], ""), (["append", "x"], ""), (["import"], #"{"op":"append","text":"x"}"#), (["log", "--follow"], ""),
      (["verify"], ""),
    ] {
      let r = s.run(["--db", other.url] + args, stdin: Data(stdin.utf8))
      #expect(r.code == 1 && r.stdout.isEmpty, "\(args): \(r)")
      #expect(r.stderr.hasPrefix("msglog: \(shown) is not a msglog database (its msglog.meta"), "\(args): \(r)")
      #expect(r.stderr.split(separator: "\n").count == 1, "\(args): \(r)")
    }
    // serve refuses to start on it, as every command refuses it.
    let refused = Self.refusedToServe(s, other.url)
    #expect(refused.code == 1 && refused.stdout.isEmpty, "\(refused)")
    #expect(refused.stderr.hasPrefix("msglog: \(shown) is not a msglog database (its msglog.meta"), "\(refused)")
    #expect(snapshot() == before)
  }

  /// A newer msglog's schema: serve refuses to start on it (it served
  /// one, answering 409 to every request), as the command line refuses it.
  @Test func aNewerSchemaIsNotServed() throws {
    let s = Sandbox(.postgres)
    s.append("x")
    let newer = "UPDATE msglog.meta SET value = '99'::bytea WHERE key = 'schema'"
    #expect(PostgresCluster.psql(newer, database: Self.name(of: s)).code == 0)
    let before = s.contents()
    let refused = Self.refusedToServe(s, s.db)
    #expect(refused.code == 1 && refused.stdout.isEmpty, "\(refused)")
    #expect(refused.stderr.contains("was written by a newer msglog (format schema 99;"), "\(refused)")
    #expect(s.contents() == before)
  }

  /// A follower whose connection is cut (its backend terminated) says so
  /// on stderr, naming the location, reconnects, and goes on after the
  /// last event it printed: the events committed meanwhile and after, each
  /// once, in order (it wrote nothing: no writer's hint).
  @Test func aFollowerWhoseConnectionIsCutGoesOn() throws {
    let s = Sandbox(.postgres)
    s.append("one")
    s.append("two")
    let database = Self.name(of: s)
    func cutTheListener() {
      // The follower's LISTEN connection, once it is there (a watchdog bounds the wait).
      for _ in 0..<1200 {
        let cut = PostgresCluster.psql(
          "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = '\(database)' AND query = 'LISTEN msglog'"
        ).stdout
        if cut.contains("t") { return }
        usleep(25_000)
      }
      Issue.record("no follower listened")
    }
    for (from, printed) in [(["--from", "1"], 2), ([], 0)] {
      let head = s.run(["log", "--json"]).lines.count
      let follower = s.start(["log", "--follow", "--json", "--limit", String(printed + 2)] + from)
      if printed > 0 {
        for _ in 0..<1200 {
          let text = (try? String(contentsOfFile: follower.outPath, encoding: .utf8)) ?? ""
          if text.split(separator: "\n").count == printed { break }
          usleep(25_000)
        }
      }
      cutTheListener()
      s.append("while cut")
      // Once it has noticed and is back (its note says so), one more.
      for _ in 0..<1200 {
        let said = (try? String(contentsOfFile: follower.errPath, encoding: .utf8)) ?? ""
        if said.contains("again\n") { break }
        usleep(25_000)
      }
      s.append("after")
      // A watchdog only: a follower that never ends must not hang the suite.
      for _ in 0..<2400 where follower.process.isRunning { usleep(25_000) }
      if follower.process.isRunning {
        Issue.record("the follower did not end")
        kill(follower.process.processIdentifier, SIGKILL)
      }
      let r = follower.finish()
      let seqs = r.lines.map {
        (try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any])?["seq"] as? Int
      }
      let expected = printed > 0 ? Array(1...(head + 2)) : [head + 1, head + 2]
      #expect(r.code == 0 && seqs == expected, "\(r)")
      let lines = r.stderr.split(separator: "\n")
      #expect(
        lines.first?.hasPrefix("msglog: lost the connection to \(s.shown): ") == true
          && lines.first?.contains(" (trying again in 0.1 s, from seq ") == true, "\(r)")
      #expect(lines.last == "msglog: following \(s.shown) again", "\(r)")
      #expect(!r.stderr.contains("hint:"), "\(r)")
    }
  }
}
