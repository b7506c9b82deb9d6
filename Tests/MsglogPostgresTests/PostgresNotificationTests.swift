import Foundation
import Msglog
import MsglogTestSupport
import Synchronization
import Testing

@testable import MsglogPostgres

#if canImport(Glibc)
  import Glibc
#endif

/// A follower of the head learns a commit from the notification behind it
/// (`NotificationWatcher`). A commit of its own process announces the head
/// it left, and the follower reads nothing: `serve`'s commit hub saves a
/// statement a commit. Anyone who may connect can `NOTIFY` on msglog's
/// channel, so a notification of any other session only says "look".
@Suite(.serialized) struct PostgresNotificationTests {
  static func database(of s: Sandbox) -> String { String(s.db.split(separator: "/").last!) }

  /// A watcher of `log`'s own store, as `serve`'s commit hub has.
  static func watcher(of log: EventLog) throws -> NotificationWatcher {
    let store = try #require(log.store as? PostgresStore)
    return try #require(try store.watchCommits() as? NotificationWatcher)
  }

  /// Waits until the watcher's socket is readable (a notification came),
  /// at most 10 s; then drains it.
  static func drained(_ watcher: NotificationWatcher) throws -> Bool {
    var fd = pollfd(fd: watcher.fileDescriptor, events: Int16(POLLIN), revents: 0)
    guard poll(&fd, 1, 10_000) == 1 else { return false }
    return try watcher.drain()
  }

  @Test func aCommitOfThisProcessAnnouncesItsHead() throws {
    let s = Sandbox(.postgres)
    s.append("seed")
    let log = try EventLog(s.db)
    let watcher = try Self.watcher(of: log)
    _ = try log.append("mine")
    #expect(try Self.drained(watcher))
    #expect(watcher.takeAnnouncedHead() == 2)
    // Taken once.
    #expect(watcher.takeAnnouncedHead() == nil)
  }

  /// Another process's commit, and a `NOTIFY` with any payload from psql,
  /// wake the follower without a head: it reads the head from the log.
  @Test func anotherSessionsNotificationAnnouncesNothing() throws {
    let s = Sandbox(.postgres)
    s.append("seed")
    let log = try EventLog(s.db)
    let watcher = try Self.watcher(of: log)
    s.append("another process")
    #expect(try Self.drained(watcher))
    #expect(watcher.takeAnnouncedHead() == nil)
    for payload in ["999999", "3", "not a seq"] {
      #expect(PostgresCluster.psql("NOTIFY msglog, '\(payload)'", database: Self.database(of: s)).code == 0)
      #expect(try Self.drained(watcher))
      #expect(watcher.takeAnnouncedHead() == nil, "NOTIFY msglog, '\(payload)'")
    }
    // Its own commit and another's in one drain: the head is read.
    _ = try log.append("mine")
    #expect(PostgresCluster.psql("NOTIFY msglog, '4'", database: Self.database(of: s)).code == 0)
    usleep(200_000)
    #expect(try Self.drained(watcher))
    #expect(watcher.takeAnnouncedHead() == nil)
  }

  /// A lying `NOTIFY` cannot move the head a follower reports: it goes on
  /// from the log's true head, through this process's commits and others'.
  @Test func aFollowerOfTheHeadTakesNoStrangersWord() throws {
    let s = Sandbox(.postgres)
    s.append("seed")
    let log = try EventLog(s.db)
    let heads = Mutex<[UInt64]>([])
    let thread = Thread {
      try? log.followHead(after: 1) { head in
        heads.withLock { $0.append(head) }
        return head < 4
      }
    }
    thread.start()
    // The follower watches before it reads: a commit after this is seen.
    usleep(300_000)
    #expect(PostgresCluster.psql("NOTIFY msglog, '999999'", database: Self.database(of: s)).code == 0)
    _ = try log.append("mine")
    s.append("another process")
    _ = try log.append("mine again")
    let deadline = Date().addingTimeInterval(20)
    while heads.withLock({ $0.last }) != 4, Date() < deadline { usleep(10_000) }
    let seen = heads.withLock { $0 }
    #expect(seen.last == 4 && seen == seen.sorted() && seen.allSatisfy { (2...4).contains($0) }, "\(seen)")
  }
}
