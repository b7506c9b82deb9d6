import Foundation
import Synchronization

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

/// The temporary directories tests made and have not removed, removed at
/// the latest when the test process exits: an object holding one can
/// outlive its test — kept by a thread or a cache still there when the
/// process ends — and is then never deinitialised (a full run left about
/// five behind).
enum TemporaryDirectories {
  private static let open: Mutex<Set<String>> = {
    atexit { TemporaryDirectories.removeAll() }
    return Mutex([])
  }()

  /// A new directory named `prefix` and a UUID in the system's temporary directory.
  static func make(prefix: String) -> String {
    let path = NSTemporaryDirectory() + prefix + UUID().uuidString
    try! FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
    open.withLock { _ = $0.insert(path) }
    return path
  }

  static func remove(_ path: String) {
    try? FileManager.default.removeItem(atPath: path)
    open.withLock { _ = $0.remove(path) }
  }

  private static func removeAll() {
    for path in open.withLock({ $0 }) { try? FileManager.default.removeItem(atPath: path) }
  }
}
