import Foundation
import Msglog
import MsglogTestSupport
import Testing

#if canImport(Glibc)
  import Glibc
#endif

/// A long-running process — `msglog serve`, an app holding an `EventLog` —
/// keeps its PostgreSQL connections in a pool. One failed transaction must
/// not poison the connection it ran on: every request after it succeeds.
@Suite(.serialized) struct PostgresPoolTests {
  /// The head row locked from psql, as another client in the middle of a
  /// write holds it, until `end()`.
  static func lockingTheHeadRow(_ s: Sandbox) throws -> PostgresTransaction {
    try PostgresTransaction(url: s.db, name: "head-row-lock", ["SELECT seq FROM msglog.head WHERE id = 1 FOR UPDATE"])
  }

  static func name(of s: Sandbox) -> String { s.databaseName! }

  /// The role waits at most 300 ms for a lock (`ALTER ROLE … SET
  /// lock_timeout`); a write while psql holds the head row fails in the
  /// transaction's opening round trip; once the lock is released, 20
  /// requests on the same server all succeed.
  @Test func aLockTimeoutPoisonsNoConnection() throws {
    let s = Sandbox(.postgres)
    s.append("seed")
    let database = Self.name(of: s)
    #expect(PostgresCluster.psql("ALTER ROLE msglog IN DATABASE \(database) SET lock_timeout = '300ms'").code == 0)
    let server = ServedLog(s)
    defer { #expect(server.stop().code == 0) }
    // A first write, so the pool holds the connection the failure will use.
    var r = server.request("POST", "/api/append", #"{"text":"before"}"#)
    #expect(r.status == 200, "\(r)")
    let lock = try Self.lockingTheHeadRow(s)
    r = server.request("POST", "/api/append", #"{"text":"while locked"}"#)
    lock.end()
    #expect(r.status == 503 && r.body.contains("lock timeout"), "\(r)")
    for n in 0..<20 {
      r =
        n % 2 == 0
        ? server.request("POST", "/api/append", #"{"text":"after \#(n)"}"#) : server.request("GET", "/api/items")
      #expect(r.status == 200, "request \(n) after the failure: \(r)")
    }
    let texts = s.run(["list", "--json"]).stdout
    #expect(!texts.contains("while locked") && texts.contains("after 18"), "\(texts)")
    #expect(s.run("verify").code == 0)
  }

  /// A role that may read but not write: its refused write (403, naming the
  /// privilege) is followed by 20 reads that succeed; once granted what a
  /// writer needs, its next write succeeds too.
  @Test func aRefusedWritePoisonsNoConnection() throws {
    let role = PostgresCluster.createRole(password: "reader-password")
    defer { PostgresCluster.dropRole(role) }
    do {
      let s = Sandbox(.postgres)
      s.append("seed")
      let database = Self.name(of: s)
      #expect(
        PostgresCluster.psql(
          "GRANT USAGE ON SCHEMA msglog TO \(role); GRANT SELECT ON ALL TABLES IN SCHEMA msglog TO \(role)",
          database: database
        ).code == 0)
      let url = "postgres://\(role):reader-password@\(PostgresCluster.hostPort)/\(database)"
      let server = ServedLog(s, ["--db", url], useDefaultDB: false)
      defer { #expect(server.stop().code == 0) }
      let before = s.contents()
      var r = server.request("POST", "/api/append", #"{"text":"refused"}"#)
      #expect(r.status == 403 && r.body.contains("permission denied for table head"), "\(r)")
      #expect(r.body.contains("\(role) lacks INSERT, UPDATE and DELETE on every table of schema msglog"), "\(r)")
      #expect(s.contents() == before, "a refused write changed the database")
      for n in 0..<20 {
        r = server.request("GET", n % 2 == 0 ? "/api/items" : "/api/events?from=1")
        #expect(r.status == 200 && r.body.contains("seed"), "read \(n) after the refused write: \(r)")
      }
      #expect(
        PostgresCluster.psql(
          "GRANT INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA msglog TO \(role)", database: database
        ).code == 0)
      r = server.request("POST", "/api/append", #"{"text":"permitted"}"#)
      #expect(r.status == 200, "\(r)")
      #expect(s.run(["list"]).stdout.contains("permitted"))
    }
  }

  /// An app that holds one `EventLog`: the same failure, then 20 writes and reads.
  @Test func anAppsEventLogSurvivesAFailedWrite() throws {
    let s = Sandbox(.postgres)
    s.append("seed")
    let database = Self.name(of: s)
    #expect(PostgresCluster.psql("ALTER ROLE msglog IN DATABASE \(database) SET lock_timeout = '300ms'").code == 0)
    let log = try EventLog(s.db)
    try log.append("before")
    let lock = try Self.lockingTheHeadRow(s)
    let error = #expect(throws: MsglogError.self) { try log.append("while locked") }
    lock.end()
    #expect("\(error.map { "\($0)" } ?? "")".contains("lock timeout"))
    for n in 0..<20 {
      try log.append("after \(n)")
      #expect(try log.items().items.count == 3 + n)
    }
    #expect(try log.verify().problems.isEmpty)
  }

  /// The notification behind a write fails once (a `pg_notify` of the
  /// database's own, found first on the role's search path, raises on its
  /// first call): the write is durable and acknowledged, and its
  /// notification is sent again, so a follower prints it at once.
  @Test func aFailedNotificationIsSentAgain() throws {
    let s = Sandbox(.postgres)
    s.append("seed")
    let database = Self.name(of: s)
    let failOnce = """
      CREATE SEQUENCE public.notifications;
      CREATE FUNCTION public.pg_notify(channel text, payload text) RETURNS void LANGUAGE plpgsql AS $$
      BEGIN
        IF nextval('public.notifications') = 1 THEN RAISE EXCEPTION 'the first notification fails'; END IF;
        PERFORM pg_catalog.pg_notify(channel, payload);
      END $$;
      ALTER ROLE msglog IN DATABASE \(database) SET search_path = public, pg_catalog;
      """
    let setUp = PostgresCluster.psql(failOnce, database: database)
    try #require(setUp.code == 0, "\(setUp)")
    let follower = s.start(["log", "--follow", "--from", "1", "--limit", "2"])
    #expect(follower.waitForOutput("seed\n"))
    let server = ServedLog(s)
    defer { #expect(server.stop().code == 0) }
    let r = server.request("POST", "/api/append", #"{"text":"woken"}"#)
    #expect(r.status == 200, "\(r)")
    // A watchdog only: without the second notification it would wait for a write.
    let woken = follower.waitForOutput("woken\n", seconds: 10)
    #expect(woken, "the follower was not woken")
    // At its limit it ends by itself.
    if !woken { kill(follower.process.processIdentifier, SIGKILL) }
    #expect(follower.finish().code == 0)
    let calls = PostgresCluster.psql("SELECT last_value FROM public.notifications", database: database)
    #expect(calls.stdout.trimmingCharacters(in: .whitespacesAndNewlines) == "2", "\(calls)")
  }
}
