import Foundation

#if canImport(Glibc)
  import Glibc
#endif

/// A read of an LMDB database by another process (Python's `lmdb`) whose
/// snapshot stays open until `release()`: the pages it sees are held, as a
/// purge must leave them. Killed when dropped unreleased.
public final class HeldRead {
  private let reader: Sandbox.Child
  private let go: String

  static let script = """
    import lmdb, os, sys, time
    env = lmdb.open(sys.argv[1], readonly=True, max_dbs=16)
    with env.begin() as txn:
        print("holding", flush=True)
        deadline = time.time() + 60
        while not os.path.exists(sys.argv[2]) and time.time() < deadline:
            time.sleep(0.01)
    """

  /// Opens a read of `sandbox`'s database and waits until it holds its snapshot.
  public init(of sandbox: Sandbox) {
    go = sandbox.dir + "/go-" + UUID().uuidString
    reader = sandbox.start(["-c", Self.script, sandbox.db, go], runner: "/usr/bin/python3")
  }

  /// Whether the read holds its snapshot (within a minute).
  public func holding() -> Bool { reader.waitForOutput("holding") }

  /// Ends the read; whether it ended as it should.
  @discardableResult
  public func release() -> Bool {
    _ = FileManager.default.createFile(atPath: go, contents: nil)
    return reader.finish().code == 0
  }

  deinit {
    if reader.process.isRunning { kill(reader.process.processIdentifier, SIGKILL) }
  }
}
