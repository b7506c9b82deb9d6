import Foundation

#if canImport(Glibc)
  import Glibc
#endif

/// The calling thread's id, as /proc names it (/proc/thread-self is
/// `PID/task/TID`).
public func currentThreadID() -> pid_t? {
  (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/thread-self"))
    .flatMap { $0.split(separator: "/").last }.flatMap { pid_t($0) }
}

/// The threads of this process blocked in poll(2) now.
public func threadsBlockedInPoll() -> Set<pid_t> {
  let tasks = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/task")) ?? []
  return Set(tasks.compactMap { name in
    guard let tid = pid_t(name), isBlockedInPoll(thread: tid) else { return nil }
    return tid
  })
}

/// Whether thread `tid` of process `pid` (this one by default) is blocked
/// in poll(2), as the kernel says (its wait channel).
public func isBlockedInPoll(thread tid: pid_t, of pid: pid_t = getpid()) -> Bool {
  let channel = (try? String(contentsOfFile: "/proc/\(pid)/task/\(tid)/wchan", encoding: .utf8)) ?? ""
  return channel.contains("poll")
}

/// Waits until `blocked` holds — a follower has read what there was and
/// sleeps in poll(2) for the store's signal — up to `seconds`; whether it
/// did. A readiness signal from the kernel, never a guess at how long a
/// thread takes to get there.
@discardableResult
public func waitUntilBlockedInPoll(seconds: Double = 60, _ blocked: () -> Bool) -> Bool {
  let deadline = Date().addingTimeInterval(seconds)
  while !blocked() {
    if Date() >= deadline { return false }
    usleep(1_000)
  }
  return true
}
