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

/// Whether thread `tid` of this process sleeps now — waits on a lock, a
/// condition, a descriptor — as the kernel says (its state in `stat`).
public func isAsleep(thread tid: pid_t) -> Bool {
  let stat = (try? String(contentsOfFile: "/proc/self/task/\(tid)/stat", encoding: .utf8)) ?? ""
  // "tid (name) S …": the state follows the name's closing parenthesis.
  guard let close = stat.lastIndex(of: ")") else { return false }
  let state = stat[close...].dropFirst(2).first
  return state == "S" || state == "D"
}

/// Waits until `ready` — threads in the state a test needs, as the kernel
/// says (`isBlockedInPoll`, `isAsleep`): a follower that has read what
/// there was and sleeps in poll(2) for the store's signal, writers queued
/// on a lock — up to `seconds`; whether it did. A readiness signal, never
/// a guess at how long a thread takes to get there.
@discardableResult
public func waitUntilThreads(seconds: Double = 60, _ ready: () -> Bool) -> Bool {
  let deadline = Date().addingTimeInterval(seconds)
  while !ready() {
    if Date() >= deadline { return false }
    usleep(1_000)
  }
  return true
}
