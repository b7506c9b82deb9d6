import Synchronization

/// The bytes of request bodies held in memory at once, all connections
/// together: a body is let in only when its size (declared, or the limit
/// for a chunked one) fits, else the request is answered 503 before its
/// body is read. A thousand clients each sending most of a big body then
/// cost this much, not a thousand bodies.
final class BodyBudget: Sendable {
  let limit: Int
  private let used = Mutex(0)

  init(limit: Int) { self.limit = limit }

  func reserve(_ bytes: Int) -> Bool {
    used.withLock { used in
      guard used + bytes <= limit else { return false }
      used += bytes
      return true
    }
  }

  func release(_ bytes: Int) { used.withLock { $0 -= bytes } }
}
