import Foundation
import Synchronization

/// The temporary directories tests made and have not removed, removed when
/// the test process exits normally (not when it crashes or is killed): an
/// object holding one can outlive its test — kept by a thread or a cache
/// still there when the process ends — and is then never deinitialised (a
/// full run left about five behind). Each one removed so is named on
/// standard error, so that the test that leaked it can be found.
enum TemporaryDirectories {
  private static let unremoved: Mutex<Set<String>> = {
    atexit { TemporaryDirectories.removeLeftovers() }
    return Mutex([])
  }()

  /// A new directory named `prefix` and a UUID in the system's temporary directory.
  static func make(prefix: String) -> String {
    let path = NSTemporaryDirectory() + prefix + UUID().uuidString
    try! FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
    unremoved.withLock { _ = $0.insert(path) }
    return path
  }

  static func remove(_ path: String) {
    try? FileManager.default.removeItem(atPath: path)
    unremoved.withLock { _ = $0.remove(path) }
  }

  private static func removeLeftovers() {
    for path in unremoved.withLock({ $0 }).sorted() {
      FileHandle.standardError.write(Data("tests: removing \(path), which outlived its test\n".utf8))
      try? FileManager.default.removeItem(atPath: path)
    }
  }
}
