import Foundation
import Testing

/// Another client's transaction on a PostgreSQL database, open until
/// `end()`: psql runs `statements` in it (a row locked, an xid taken) and
/// then sits idle in it, as an application in the middle of its work
/// does, under application name `name` (what `pg_stat_activity` and a
/// purge's message show). Returns once every statement has run.
public final class PostgresTransaction {
  let process = Process()
  let input = Pipe()

  public init(url: String, name: String, _ statements: [String]) throws {
    process.executableURL = URL(fileURLWithPath: "/usr/bin/psql")
    process.arguments = ["-qAt", "-v", "ON_ERROR_STOP=1", url]
    let output = Pipe()
    process.standardInput = input
    process.standardOutput = output
    process.standardError = FileHandle.nullDevice
    try process.run()
    // A statement that cannot run (a lock another holds) fails after 30 s,
    // and psql with it (ON_ERROR_STOP): the wait below is bounded.
    let script =
      ["SET application_name = '\(name)'", "SET statement_timeout = '30s'", "BEGIN"] + statements + ["SELECT 'held'"]
    input.fileHandleForWriting.write(Data(script.map { $0 + ";\n" }.joined().utf8))
    // Held once psql prints the last statement's answer (or gone: it failed).
    #expect(readsUntil("held", from: output), "\(name)'s transaction did not begin")
  }

  /// Whether psql, and so the transaction, is still there.
  public var isOpen: Bool { process.isRunning }

  /// Rolls the transaction back and waits for psql to go (again: nothing).
  public func end() {
    guard process.isRunning else { return }
    input.fileHandleForWriting.write(Data("ROLLBACK;\n".utf8))
    try? input.fileHandleForWriting.close()
    process.waitUntilExit()
  }

  /// A test that stopped early leaves no transaction open.
  deinit { end() }
}
