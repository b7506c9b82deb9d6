import Foundation
import Msglog

#if canImport(Glibc)
  import Glibc
#endif

/// Latency from a commit to a follower's output: `msglog log --follow
/// --json` processes, woken by the store, print each event a writer in this
/// process commits; the time from the writer's commit returning to the line
/// arriving on the follower's stdout, p50 and p99.
struct FollowBench {
  var directory: String
  var msglog: String
  var followers = 3
  var events = 300
  /// Where the writer writes and the followers follow: the LMDB directory
  /// by default; a primary and its standby on PostgreSQL.
  var writeTo: String
  var followOn: String

  init(directory: String, msglog: String, writeTo: String? = nil, followOn: String? = nil) {
    self.directory = directory
    self.msglog = msglog
    self.writeTo = writeTo ?? directory
    self.followOn = followOn ?? directory
  }

  struct Results {
    var p50: Duration
    var p99: Duration
    var samples: Int
    /// The writer's own durable commit, for scale.
    var commitP50: Duration
  }

  func run() throws -> Results {
    try? FileManager.default.removeItem(atPath: directory)
    let log = try EventLog(writeTo)
    if writeTo == directory { try log.append("seed") }
    let arrivals = Arrivals()
    var children: [(pid_t, Int32)] = []
    for _ in 0..<followers {
      children.append(try spawnFollower(arrivals))
    }
    defer {
      for (pid, fd) in children {
        kill(pid, SIGTERM)
        var status: Int32 = 0
        waitpid(pid, &status, 0)
        close(fd)
      }
    }
    // Every follower is following once it has printed the seed.
    let start = ContinuousClock.now
    while arrivals.count(of: 1) < followers {
      guard ContinuousClock.now - start < .seconds(20) else { throw BenchError("followers did not start") }
      usleep(1000)
    }
    var committed: [UInt64: ContinuousClock.Instant] = [:]
    var commits: [Duration] = []
    for n in 0..<events {
      let before = ContinuousClock.now
      let outcome = try log.append("event \(n)")
      let after = ContinuousClock.now
      committed[outcome.event.seq] = after
      commits.append(after - before)
      // Followers idle between commits, as they do behind a chat.
      usleep(useconds_t(2_000 + (n % 7) * 1_000))
    }
    let deadline = ContinuousClock.now + .seconds(20)
    while committed.keys.contains(where: { arrivals.count(of: $0) < followers }) {
      guard ContinuousClock.now < deadline else { throw BenchError("followers missed events") }
      usleep(1000)
    }
    var latencies: [Duration] = []
    for (seq, commit) in committed {
      for arrival in arrivals.times(of: seq) { latencies.append(max(.zero, arrival - commit)) }
    }
    latencies.sort()
    commits.sort()
    return Results(
      p50: latencies[latencies.count / 2], p99: latencies[latencies.count * 99 / 100], samples: latencies.count,
      commitP50: commits[commits.count / 2])
  }

  /// Starts `msglog log --follow --json --from 1` with its stdout on a pipe
  /// read by a thread of ours, which stamps each line as it arrives.
  func spawnFollower(_ arrivals: Arrivals) throws -> (pid_t, Int32) {
    var ends: [Int32] = [0, 0]
    guard pipe(&ends) == 0 else { throw BenchError("pipe failed") }
    var actions = posix_spawn_file_actions_t()
    posix_spawn_file_actions_init(&actions)
    defer { posix_spawn_file_actions_destroy(&actions) }
    posix_spawn_file_actions_adddup2(&actions, ends[1], 1)
    posix_spawn_file_actions_addclose(&actions, ends[0])
    let words: [String] = [msglog, "--db", followOn, "log", "--follow", "--json", "--from", "1"]
    let argv = words.map { strdup($0) } + [nil]
    defer { for p in argv { free(p) } }
    var pid: pid_t = 0
    guard posix_spawn(&pid, msglog, &actions, nil, argv, environ) == 0 else { throw BenchError("spawn failed") }
    close(ends[1])
    let fd = ends[0]
    let thread = Thread {
      var pending: [UInt8] = []
      var buffer = [UInt8](repeating: 0, count: 65_536)
      while true {
        let n = buffer.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress, $0.count) }
        if n <= 0 { return }
        let now = ContinuousClock.now
        pending.append(contentsOf: buffer[0..<n])
        while let newline = pending.firstIndex(of: 0x0A) {
          let line = pending[..<newline]
          // {"seq":N,... — the seq is the first member.
          if let end = line.dropFirst(7).firstIndex(of: UInt8(ascii: ",")),
            let seq = UInt64(String(decoding: line[7..<end], as: UTF8.self))
          {
            arrivals.record(seq, at: now)
          }
          pending.removeSubrange(...newline)
        }
      }
    }
    thread.start()
    return (pid, fd)
  }
}

/// When each follower printed each seq.
final class Arrivals: @unchecked Sendable {
  private let lock = NSLock()
  private var seen: [UInt64: [ContinuousClock.Instant]] = [:]

  func record(_ seq: UInt64, at time: ContinuousClock.Instant) {
    lock.withLock { seen[seq, default: []].append(time) }
  }

  func count(of seq: UInt64) -> Int { lock.withLock { seen[seq]?.count ?? 0 } }
  func times(of seq: UInt64) -> [ContinuousClock.Instant] { lock.withLock { seen[seq] ?? [] } }
}
