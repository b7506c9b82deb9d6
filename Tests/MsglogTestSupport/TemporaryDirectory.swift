import Foundation

/// A fresh directory per test, removed with it. LMDB must not open one
/// environment twice in a process, and tests run in parallel.
public final class TemporaryDirectory: @unchecked Sendable {  // immutable after init
  public let path: String

  public init() {
    path = TemporaryDirectories.make(prefix: "msglog-test-")
  }

  deinit { TemporaryDirectories.remove(path) }

  /// A database path inside it (not created: the first write does).
  public var db: String { path + "/db.lmdb" }
}
