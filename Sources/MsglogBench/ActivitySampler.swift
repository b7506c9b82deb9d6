import Foundation

/// What PostgreSQL's sessions on one database are doing, sampled every
/// 20 ms while a measurement runs (`pg_stat_activity` through one `psql`
/// `\watch`): how often a session waits on a lock, sits idle inside a
/// transaction (holding its locks across a client round trip), or works.
final class ActivitySampler {
  private let process = Process()
  private let output: String

  init(server: String, database: String, directory: String) throws {
    output = directory + "/activity-\(UUID().uuidString).txt"
    _ = FileManager.default.createFile(atPath: output, contents: nil)
    process.executableURL = URL(fileURLWithPath: "/usr/bin/psql")
    process.arguments = ["-qAt", server + "/postgres"]
    let input = Pipe()
    process.standardInput = input
    process.standardOutput = FileHandle(forWritingAtPath: output)
    process.standardError = FileHandle.nullDevice
    try process.run()
    input.fileHandleForWriting.write(
      Data(
        ("SELECT coalesce(wait_event_type || ':' || wait_event, state) FROM pg_stat_activity "
          + "WHERE datname = '\(database)' AND backend_type = 'client backend' AND state <> 'idle' "
          + "AND pid <> pg_backend_pid() \\watch 0.02\n").utf8))
  }

  /// Stops sampling; how many samples found each state, most first.
  func stop() -> [(state: String, count: Int)] {
    process.terminate()
    process.waitUntilExit()
    let text = (try? String(contentsOfFile: output, encoding: .utf8)) ?? ""
    try? FileManager.default.removeItem(atPath: output)
    var counts: [String: Int] = [:]
    for line in text.split(separator: "\n") where !line.isEmpty { counts[String(line), default: 0] += 1 }
    return counts.sorted { $0.value > $1.value }.map { ($0.key, $0.value) }
  }
}
