import Foundation

#if canImport(Glibc)
  import Glibc
#endif

/// Which store a parameterised test runs against.
public enum Store: String, CaseIterable, Sendable, CustomStringConvertible {
  case lmdb
  case postgres

  public var description: String { rawValue }
}

/// The throwaway PostgreSQL cluster the tests use: the one `scripts/test`
/// started (`MSGLOG_TEST_PG`, `MSGLOG_TEST_PG_DIR`), or one started here
/// with `scripts/pg-cluster` on first use and stopped when the tests exit.
public enum PostgresCluster {
  /// A superuser URL to the cluster's `postgres` database.
  public static let url: String = start().url
  /// The cluster's directory, for `scripts/pg-cluster crash|restart`.
  public static let directory: String = start().directory

  private static let started: (url: String, directory: String) = {
    let environment = ProcessInfo.processInfo.environment
    if let url = environment["MSGLOG_TEST_PG"], let dir = environment["MSGLOG_TEST_PG_DIR"] { return (url, dir) }
    // Through a file and `shell` (posix_spawn, waitpid), not Foundation's
    // Process and a pipe: the server pg_ctl leaves running made the
    // pipe's reader, or Process's exit notification, wait for ever.
    let output = NSTemporaryDirectory() + "/msglog-pg-start-\(getpid()).txt"
    defer { unlink(output) }
    let status = shell("'\(repositoryRoot)/scripts/pg-cluster' start > '\(output)'")
    precondition(status == 0, "scripts/pg-cluster start failed (is postgresql installed?)")
    let text = (try? String(contentsOfFile: output, encoding: .utf8)) ?? ""
    func value(_ name: String) -> String {
      let line = text.split(separator: "\n").first { $0.hasPrefix("export \(name)=") }!
      return String(line.dropFirst("export \(name)=".count).dropFirst().dropLast())
    }
    let directory = value("MSGLOG_TEST_PG_DIR")
    stopAtExit = directory
    atexit { shell("'\(repositoryRoot)/scripts/pg-cluster' stop '\(PostgresCluster.stopAtExit!)'") }
    return (value("MSGLOG_TEST_PG"), directory)
  }()

  nonisolated(unsafe) static var stopAtExit: String? = nil

  private static func start() -> (url: String, directory: String) { started }

  /// The superuser's password (tests check it never reaches any output).
  public static var password: String {
    let user = url.split(separator: "@")[0]
    return String(user.split(separator: ":").last ?? "")
  }

  /// The server's URL without a database name (`…@host:port`).
  public static var server: String { String(url.dropLast("/postgres".count)) }

  /// Runs SQL with psql as the cluster's superuser.
  @discardableResult
  public static func psql(_ sql: String, database: String = "postgres") -> Run {
    psql(sql, server: server, database: database)
  }

  /// Runs SQL with psql on `server` (`…@host:port`). A run that fails
  /// other than by its SQL (psql's exit 1 or 2, where an SQL error is 3:
  /// the shared cluster briefly out of connection slots while other tests
  /// hold hundreds) is tried again, a few times.
  static func psql(_ sql: String, server: String, database: String) -> Run {
    var run = psqlOnce(sql, server: server, database: database)
    for attempt in 0..<5 where run.code == 1 || run.code == 2 {
      usleep(useconds_t(100_000 << attempt))
      run = psqlOnce(sql, server: server, database: database)
    }
    return run
  }

  private static func psqlOnce(_ sql: String, server: String, database: String) -> Run {
    let p = Process()
    p.executableURL = URL(fileURLWithPath: "/usr/bin/psql")
    p.arguments = ["-qAt", "-v", "ON_ERROR_STOP=1", server + "/" + database, "-c", sql]
    let out = Pipe()
    let err = Pipe()
    p.standardOutput = out
    p.standardError = err
    try! p.run()
    let stdout = out.fileHandleForReading.readDataToEndOfFile()
    let stderr = err.fileHandleForReading.readDataToEndOfFile()
    p.waitUntilExit()
    return Run(
      code: p.terminationStatus, stdout: String(decoding: stdout, as: UTF8.self),
      stderr: String(decoding: stderr, as: UTF8.self))
  }

  /// A fresh, empty database; its URL.
  public static func createDatabase() -> (name: String, url: String) {
    let name = "msglog_test_" + UUID().uuidString.replacing("-", with: "").lowercased()
    let r = psql("CREATE DATABASE \(name)")
    precondition(r.code == 0, "CREATE DATABASE failed: \(r)")
    return (name, server + "/" + name)
  }

  /// A new database that starts as a copy of `template` (nobody may be
  /// connected to it meanwhile): a fresh copy of a log for each round of a test.
  public static func copyDatabase(_ template: String) -> (name: String, url: String) {
    let name = "msglog_test_" + UUID().uuidString.replacing("-", with: "").lowercased()
    let r = psql("CREATE DATABASE \(name) TEMPLATE \(template)")
    precondition(r.code == 0, "CREATE DATABASE … TEMPLATE failed: \(r)")
    return (name, server + "/" + name)
  }

  public static func dropDatabase(_ name: String) {
    psql("DROP DATABASE IF EXISTS \(name) WITH (FORCE)")
  }

  /// A login role of the test's own, with `password` and no privilege but
  /// PUBLIC's (it may connect). Drop it with `dropRole` once every database
  /// it was granted anything in, or owns, is dropped.
  public static func createRole(password: String) -> String {
    let name = "msglog_role_" + UUID().uuidString.replacing("-", with: "").lowercased()
    let r = psql("CREATE ROLE \(name) LOGIN PASSWORD '\(password)'")
    precondition(r.code == 0, "CREATE ROLE failed: \(r)")
    return name
  }

  public static func dropRole(_ name: String) {
    psql("DROP ROLE IF EXISTS \(name)")
  }

  /// The server's `host:port`.
  public static var hostPort: String { String(server.split(separator: "@").last!) }

  /// A digest of every msglog table, to check that a refused command changed nothing.
  public static func digest(of database: String) -> String {
    let tables = ["meta", "head", "events", "streams", "nodes", "ids", "checkpoints"]
    let sql = tables.map {
      "(SELECT coalesce(md5(string_agg(t::text, ',' ORDER BY t::text)), '-') FROM msglog.\($0) t)"
    }
    .joined(separator: " || ")
    let r = psql("SELECT \(sql)", database: database)
    return r.code == 0 ? r.stdout : "no msglog tables"
  }

  /// `scripts/pg-cluster crash|restart`.
  public static func control(_ command: String) -> Int32 {
    shell("\(repositoryRoot)/scripts/pg-cluster \(command) \(directory)")
  }
}
