import Msglog

/// At most `count` callers at once run a costly piece of work; the others
/// wait their turn.
final class Permits: Sendable {
  private let free: Guarded<Int>

  init(_ count: Int) { free = Guarded(count) }

  func run<R>(_ body: () throws -> R) rethrows -> R {
    free.wait(until: { $0 > 0 }) { free, _ in free -= 1 }
    defer { free.update { $0 += 1 } }
    return try body()
  }
}
