#if canImport(Glibc)
  import Glibc
#endif

/// A value that threads share, behind a mutex, with a condition to wait on
/// until it changes: what `Synchronization.Mutex` cannot offer, since a
/// condition variable needs the pthread mutex it waits with.
///
/// The mutex and the condition live in memory of their own, allocated once:
/// pthread objects must never move, and a stored property of a class or a
/// struct gives no such promise.
package final class Guarded<Value>: @unchecked Sendable {
  private let mutex: UnsafeMutablePointer<pthread_mutex_t>
  private let changed: UnsafeMutablePointer<pthread_cond_t>
  /// Read and written only with `mutex` held.
  private var value: Value

  package init(_ value: Value) {
    self.value = value
    mutex = .allocate(capacity: 1)
    pthread_mutex_init(mutex, nil)
    changed = .allocate(capacity: 1)
    var attributes = pthread_condattr_t()
    pthread_condattr_init(&attributes)
    // Deadlines on the monotonic clock: a change of the wall clock must not
    // stretch or cut a wait.
    pthread_condattr_setclock(&attributes, CLOCK_MONOTONIC)
    pthread_cond_init(changed, &attributes)
    pthread_condattr_destroy(&attributes)
  }

  deinit {
    pthread_cond_destroy(changed)
    changed.deallocate()
    pthread_mutex_destroy(mutex)
    mutex.deallocate()
  }

  /// Runs `body` with the value, and wakes every waiter afterwards (they
  /// check their own condition again) — or, `wakingOne`, one of them: for
  /// a change any one of many alike waiters can take (a job queued for a
  /// pool of workers), where waking them all would only send the rest
  /// back to sleep.
  @discardableResult
  package func update<R>(wakingOne: Bool = false, _ body: (inout Value) throws -> R) rethrows -> R {
    pthread_mutex_lock(mutex)
    defer {
      if wakingOne { pthread_cond_signal(changed) } else { pthread_cond_broadcast(changed) }
      pthread_mutex_unlock(mutex)
    }
    return try body(&value)
  }

  /// Runs `body` with the value, and wakes every waiter afterwards only
  /// when `wake` holds of the value it left: for a waiter whose condition
  /// the caller knows (the one thread gathering a batch, woken once enough
  /// writes wait rather than by each of them).
  ///
  /// - Warning: `wake` must hold whenever `body` may have made any waiter's
  ///   condition true: a waiter left asleep waits out its deadline, or for ever.
  @discardableResult
  package func update<R>(wakingIf wake: (Value) -> Bool, _ body: (inout Value) throws -> R) rethrows -> R {
    pthread_mutex_lock(mutex)
    defer {
      if wake(value) { pthread_cond_broadcast(changed) }
      pthread_mutex_unlock(mutex)
    }
    return try body(&value)
  }

  /// Runs `body` with the value, waking no one.
  package func read<R>(_ body: (Value) throws -> R) rethrows -> R {
    pthread_mutex_lock(mutex)
    defer { pthread_mutex_unlock(mutex) }
    return try body(value)
  }

  /// Waits until `ready` holds or `deadline` (a `Deadline`, nil: none)
  /// passes, then runs `body` with the value, still under the lock, and
  /// then wakes the other waiters (they check their own condition again),
  /// unless `wakingOthers` is false: for a `body` that changes nothing
  /// another waiter waits for, where waking them all would be wasted.
  package func wait<R>(
    until ready: (Value) -> Bool, deadline: Deadline? = nil, wakingOthers: Bool = true,
    then body: (inout Value, _ ready: Bool) throws -> R
  ) rethrows -> R {
    pthread_mutex_lock(mutex)
    defer { pthread_mutex_unlock(mutex) }
    var isReady = ready(value)
    while !isReady {
      if var time = deadline?.timespec {
        if pthread_cond_timedwait(changed, mutex, &time) == ETIMEDOUT {
          isReady = ready(value)
          break
        }
      } else {
        pthread_cond_wait(changed, mutex)
      }
      isReady = ready(value)
    }
    let result = try body(&value, isReady)
    if wakingOthers { pthread_cond_broadcast(changed) }
    return result
  }
}

/// A point on the monotonic clock.
package struct Deadline: Sendable, Comparable {
  package var nanoseconds: UInt64

  package static func now() -> Deadline {
    var time = Glibc.timespec()
    clock_gettime(CLOCK_MONOTONIC, &time)
    return Deadline(nanoseconds: UInt64(time.tv_sec) * 1_000_000_000 + UInt64(time.tv_nsec))
  }

  package static func after(seconds: Double) -> Deadline {
    Deadline(nanoseconds: now().nanoseconds + UInt64(max(seconds, 0) * 1e9))
  }

  package static func after(_ duration: Duration) -> Deadline {
    let (seconds, attoseconds) = max(duration, .zero).components
    let nanoseconds = UInt64(seconds) * 1_000_000_000 + UInt64(attoseconds / 1_000_000_000)
    return Deadline(nanoseconds: now().nanoseconds + nanoseconds)
  }

  package var hasPassed: Bool { self <= .now() }

  /// Nanoseconds from `earlier` to this instant; 0 when `earlier` is not
  /// earlier: a time another thread took after this one but recorded
  /// first, or one this thread took after this one. (A plain difference
  /// would trap.)
  package func nanoseconds(since earlier: Deadline) -> UInt64 {
    nanoseconds > earlier.nanoseconds ? nanoseconds - earlier.nanoseconds : 0
  }

  /// Seconds from now until then (0 once passed).
  package var secondsLeft: Double { Double(nanoseconds(since: .now())) / 1e9 }

  /// Milliseconds from now until then (0 once passed), for `poll`.
  package var millisecondsLeft: Int32 { Int32(clamping: (nanoseconds(since: .now()) + 999_999) / 1_000_000) }

  var timespec: Glibc.timespec {
    Glibc.timespec(tv_sec: Int(nanoseconds / 1_000_000_000), tv_nsec: Int(nanoseconds % 1_000_000_000))
  }

  package static func < (a: Deadline, b: Deadline) -> Bool { a.nanoseconds < b.nanoseconds }
}
