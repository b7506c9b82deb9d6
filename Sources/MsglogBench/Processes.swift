import Foundation

#if canImport(Glibc)
  import Glibc
#endif

/// A command run as its own process: wall time from spawn to exit, peak
/// resident memory, and exit status.
///
/// Spawned with posix_spawn and reaped with wait4: Foundation's `Process`
/// polls for exit every 50 ms on Linux, which would swamp 10 ms commands.
struct ProcessRun {
  var time: Duration
  /// Peak RSS from wait4 (it counts mapped database pages that were read, too).
  var peakKiB: Int
  /// Peak anonymous memory (heap, stacks), sampled from /proc while it runs.
  var peakAnonKiB: Int
  var status: Int32
}

/// `output`: the file its stdout goes to, as a user's `> file` would;
/// /dev/null when nil. What an earlier run left in the file is truncated
/// before the clock starts: truncated in the timed child, it cost the run
/// that truncated it 0.5–1.3 ms (the pages freed, waiting for any being
/// written back) — a fifth of a short trace's text `replay`, and paid for
/// the other command's output where two alternate on one file.
func runProcess(
  _ executable: String, _ arguments: [String], stdin: String? = nil, output: String? = nil, sampleMemory: Bool = false
) throws -> ProcessRun {
  var inputPath = "/dev/null"
  if let stdin {
    inputPath = NSTemporaryDirectory() + "msglog-bench-in-" + UUID().uuidString
    _ = FileManager.default.createFile(atPath: inputPath, contents: Data(stdin.utf8))
  }
  defer { if stdin != nil { try? FileManager.default.removeItem(atPath: inputPath) } }
  var actions = posix_spawn_file_actions_t()
  posix_spawn_file_actions_init(&actions)
  defer { posix_spawn_file_actions_destroy(&actions) }
  posix_spawn_file_actions_addopen(&actions, 0, inputPath, O_RDONLY, 0)
  posix_spawn_file_actions_addopen(&actions, 1, output ?? "/dev/null", O_WRONLY | O_CREAT | O_TRUNC, 0o600)
  posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0)
  if let output { truncate(output, 0) }
  let argv = ([executable] + arguments).map { strdup($0) } + [nil]
  defer { for p in argv { free(p) } }
  var pid: pid_t = 0
  let start = ContinuousClock.now
  let rc = posix_spawn(&pid, executable, &actions, nil, argv, environ)
  guard rc == 0 else { throw BenchError("cannot start \(executable): \(String(cString: strerror(rc)))") }
  var status: Int32 = 0
  var usage = rusage()
  var peakAnon = 0
  if sampleMemory {
    while wait4(pid, &status, WNOHANG, &usage) == 0 {
      if let text = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8),
        let line = text.split(separator: "\n").first(where: { $0.hasPrefix("RssAnon:") }),
        let kib = Int(line.split(separator: " ", omittingEmptySubsequences: true).dropFirst().first ?? "")
      {
        peakAnon = max(peakAnon, kib)
      }
      usleep(1000)
    }
  } else {
    while wait4(pid, &status, 0, &usage) < 0 && errno == EINTR {}
  }
  let time = ContinuousClock.now - start
  let exited = status & 0x7F == 0
  return ProcessRun(
    time: time, peakKiB: usage.ru_maxrss, peakAnonKiB: peakAnon,
    status: exited ? (status >> 8) & 0xFF : 128 + (status & 0x7F))
}

/// The best time of `runs` runs of a command that must succeed; memory from one more, sampled run.
func bestProcess(_ runs: Int, _ executable: String, _ arguments: [String], stdin: String? = nil, memory: Bool = false)
  throws -> ProcessRun
{
  var best: ProcessRun? = nil
  for _ in 0..<runs {
    let r = try runProcess(executable, arguments, stdin: stdin)
    guard r.status == 0 else {
      throw BenchError("\(executable) \(arguments.joined(separator: " ")) exited \(r.status)")
    }
    if best == nil || r.time < best!.time { best = r }
  }
  if memory {
    let sampled = try runProcess(executable, arguments, stdin: stdin, sampleMemory: true)
    best!.peakAnonKiB = sampled.peakAnonKiB
    best!.peakKiB = sampled.peakKiB
  }
  return best!
}
