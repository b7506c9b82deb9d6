import Foundation
import Testing

/// Another process holding the store's write lock until `release()` (or
/// until it goes): a Python LMDB write transaction, or psql holding the
/// head row. Writers of the store wait behind it, as behind any writer.
public final class WriterLock {
  let process = Process()
  let input = Pipe()

  public init(_ s: Sandbox) throws {
    process.executableURL = URL(fileURLWithPath: s.store == .lmdb ? "/usr/bin/python3" : "/usr/bin/psql")
    let output = Pipe()
    switch s.store {
    case .lmdb:
      process.arguments = [
        "-c",
        "import lmdb,sys; env = lmdb.open(sys.argv[1], max_dbs=16); txn = env.begin(write=True); "
          + "print('held', flush=True); sys.stdin.read(); txn.abort()",
        s.db,
      ]
    case .postgres:
      process.arguments = ["-qAt", "-v", "ON_ERROR_STOP=1", s.db]
    }
    process.standardInput = input
    process.standardOutput = output
    process.standardError = FileHandle.nullDevice
    try process.run()
    if s.store == .postgres {
      input.fileHandleForWriting.write(
        Data("BEGIN;\nSELECT 'held' FROM msglog.head WHERE id = 1 FOR UPDATE;\n".utf8))
    }
    // Held once it says so.
    var said = Data()
    while !String(decoding: said, as: UTF8.self).contains("held") {
      let chunk = output.fileHandleForReading.availableData
      if chunk.isEmpty { break }
      said += chunk
    }
    #expect(String(decoding: said, as: UTF8.self).contains("held"), "the lock was not taken")
  }

  /// Lets go of the lock (again: nothing).
  public func release() {
    try? input.fileHandleForWriting.close()
    process.waitUntilExit()
  }

  /// A test that stopped early does not leave the lock held.
  deinit { release() }
}
