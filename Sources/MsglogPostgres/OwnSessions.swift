import Synchronization

/// The server sessions (backend process ids) of one store's own
/// connections, while they are open: a notification sent by one of them
/// was sent by this process's own write, after its commit was durable,
/// with the head it left (`PostgresSchema.notifyAfterCommit`) — a head a
/// follower of this process may take without reading it again
/// (`NotificationWatcher`). Anyone who may connect can `NOTIFY`; only
/// these sessions' words are taken.
final class OwnSessions: Sendable {
  private let pids = Mutex<Set<Int32>>([])

  func insert(_ pid: Int32) { _ = pids.withLock { $0.insert(pid) } }
  func remove(_ pid: Int32) { _ = pids.withLock { $0.remove(pid) } }
  func contains(_ pid: Int32) -> Bool { pids.withLock { $0.contains(pid) } }
}
