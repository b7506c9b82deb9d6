import Foundation

#if canImport(Glibc)
  import Glibc
#endif

/// A PostgreSQL server of a test's own, started by the test and stopped
/// (its directory removed) by `stop()`: a primary the test may restart or
/// crash without disturbing the tests that share `PostgresCluster`, or a
/// hot standby of the shared cluster (`pg_basebackup -R`).
public final class PostgresServer: @unchecked Sendable {
  /// A superuser URL to its `postgres` database.
  public let url: String
  public let directory: String

  private init(url: String, directory: String) {
    self.url = url
    self.directory = directory
  }

  /// A fresh primary of its own (initdb, a free port).
  public static func primary() -> PostgresServer {
    start("start", urlVariable: "MSGLOG_TEST_PG", directoryVariable: "MSGLOG_TEST_PG_DIR")
  }

  /// A hot standby streaming from the shared cluster, on a port of its own:
  /// it holds the cluster's databases as they are, and replays every commit.
  public static func standbyOfTheSharedCluster() -> PostgresServer {
    start(
      "standby '\(PostgresCluster.directory)'", urlVariable: "MSGLOG_TEST_PG_STANDBY",
      directoryVariable: "MSGLOG_TEST_PG_STANDBY_DIR")
  }

  /// A hot standby streaming from `primary`, on a port of its own.
  public static func standby(of primary: PostgresServer) -> PostgresServer {
    start(
      "standby '\(primary.directory)'", urlVariable: "MSGLOG_TEST_PG_STANDBY",
      directoryVariable: "MSGLOG_TEST_PG_STANDBY_DIR")
  }

  private static func start(_ command: String, urlVariable: String, directoryVariable: String) -> PostgresServer {
    let output = NSTemporaryDirectory() + "/msglog-pg-server-\(UUID().uuidString).txt"
    defer { unlink(output) }
    let status = shell("'\(repositoryRoot)/scripts/pg-cluster' \(command) > '\(output)'")
    precondition(status == 0, "scripts/pg-cluster \(command) failed")
    let text = (try? String(contentsOfFile: output, encoding: .utf8)) ?? ""
    func value(_ name: String) -> String {
      let line = text.split(separator: "\n").first { $0.hasPrefix("export \(name)=") }!
      return String(line.dropFirst("export \(name)=".count).dropFirst().dropLast())
    }
    return PostgresServer(url: value(urlVariable), directory: value(directoryVariable))
  }

  /// The server's URL without a database name (`…@host:port`).
  public var server: String { String(url.dropLast("/postgres".count)) }

  /// The URL of one of its databases.
  public func url(of database: String) -> String { server + "/" + database }

  /// `scripts/pg-cluster COMMAND` on this server: `crash`, `restart`, `bounce`.
  @discardableResult
  public func control(_ command: String) -> Int32 {
    shell("'\(repositoryRoot)/scripts/pg-cluster' \(command) '\(directory)'")
  }

  /// Runs SQL with psql as its superuser.
  @discardableResult
  public func psql(_ sql: String, database: String = "postgres") -> Run {
    PostgresCluster.psql(sql, server: server, database: database)
  }

  /// Stops it and removes its directory.
  public func stop() { control("stop") }
}
