import Foundation
import Testing

/// Another process holding the store's write lock until `release()` (or
/// until it goes): a Python LMDB write transaction, or psql holding the
/// head row. Writers of the store wait behind it, as behind any writer.
public final class WriterLock {
  /// LMDB's: Python's write transaction.
  var process: Process?
  let input = Pipe()
  /// PostgreSQL's: the head row locked.
  var transaction: PostgresTransaction?

  public init(_ s: Sandbox) throws {
    guard s.store == .lmdb else {
      transaction = try PostgresTransaction(
        url: s.db, name: "writer-lock", ["SELECT seq FROM msglog.head WHERE id = 1 FOR UPDATE"])
      return
    }
    let process = Process()
    self.process = process
    process.executableURL = URL(fileURLWithPath: "/usr/bin/python3")
    process.arguments = [
      "-c",
      "import lmdb,sys; env = lmdb.open(sys.argv[1], max_dbs=16); txn = env.begin(write=True); "
        + "print('held', flush=True); sys.stdin.read(); txn.abort()",
      s.db,
    ]
    let output = Pipe()
    process.standardInput = input
    process.standardOutput = output
    process.standardError = FileHandle.nullDevice
    try process.run()
    // Held once it says so.
    #expect(readsUntil("held", from: output), "the lock was not taken")
  }

  /// Lets go of the lock (again: nothing).
  public func release() {
    transaction?.end()
    try? input.fileHandleForWriting.close()
    process?.waitUntilExit()
  }

  /// A test that stopped early does not leave the lock held.
  deinit { release() }
}
