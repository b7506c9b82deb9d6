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
/// (`NotificationWatcher`). A head no higher than what its own process
/// committed is taken as announced, and the follower reads nothing:
/// `serve`'s commit hub saves a statement a commit. Anyone who may connect
/// can `NOTIFY` on msglog's channel, so anything else only says "look".
@Suite(.serialized) struct PostgresNotificationTests {
  static func notify(_ payload: String, _ s: Sandbox) {
    #expect(PostgresCluster.psql("NOTIFY msglog, '\(payload)'", database: s.databaseName!).code == 0)
  }

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

  /// Follows `log`'s head on a thread of its own, as `serve`'s commit hub
  /// does, until it is told `last` or 20 s pass (a watchdog, not a
  /// measure); `meanwhile` runs once it has been told its first head.
  /// Returns every head it was told, after it has stopped.
  static func headsFollowed(of log: EventLog, until last: UInt64, meanwhile: () throws -> Void) throws -> [UInt64] {
    var stop: [Int32] = [0, 0]
    #expect(pipe(&stop) == 0)
    defer { close(stop[0]) }
    // Closed however this ends: what `meanwhile` throws must not leave the follower waiting.
    var stopped = false
    defer { if !stopped { close(stop[1]) } }
    let heads = Mutex<[UInt64]>([])
    let ended = DispatchSemaphore(value: 0)
    let thread = Thread { [stopFD = stop[0]] in
      try? log.followHead(after: 0, stop: [FollowStop(fileDescriptor: stopFD, whenReadable: true)]) { head in
        heads.withLock { $0.append(head) }
        return head < last
      }
      ended.signal()
    }
    thread.start()
    // The first head is told after the follower watches (it watches, then reads).
    let deadline = Date().addingTimeInterval(20)
    while heads.withLock({ $0.isEmpty }), Date() < deadline { usleep(10_000) }
    try meanwhile()
    while heads.withLock({ $0.last }) != last, Date() < deadline { usleep(10_000) }
    close(stop[1])
    stopped = true
    #expect(ended.wait(timeout: .now() + 10) == .success)
    return heads.withLock { $0 }
  }

  /// Only a seq as msglog writes one, no higher than the limit, in every
  /// payload of a drain.
  @Test func aHeadIsTakenOnlyAsWrittenAndNoHigherThanCommittedHere() {
    typealias W = NotificationWatcher
    #expect(W.announcedHead(of: ["5"], upTo: 5) == 5)
    #expect(W.announcedHead(of: ["3", "5", "4"], upTo: 9) == 5)
    #expect(W.announcedHead(of: [], upTo: 5) == nil)
    #expect(W.announcedHead(of: ["6"], upTo: 5) == nil)
    #expect(W.announcedHead(of: ["3", "6"], upTo: 5) == nil)
    for payload in ["+5", "05", "-0", " 5", "5 ", "", "5x", "18446744073709551615", "18446744073709551616"] {
      let expected: UInt64? = payload == "18446744073709551615" ? .max : nil
      #expect(W.announcedHead(of: [payload], upTo: .max) == expected, "\(payload)")
      #expect(W.announcedHead(of: ["3", payload], upTo: 5) == nil, "\(payload)")
    }
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

  /// Another process's commit, and a `NOTIFY` of a head this process has
  /// not committed (or of no seq at all), wake the follower without a
  /// head: it reads the head from the log.
  @Test func aHeadThisProcessDidNotCommitIsNotTaken() throws {
    let s = Sandbox(.postgres)
    s.append("seed")
    let log = try EventLog(s.db)
    let watcher = try Self.watcher(of: log)
    s.append("another process")
    #expect(try Self.drained(watcher))
    #expect(watcher.takeAnnouncedHead() == nil)
    _ = try log.append("mine")  // head 3, committed here
    #expect(try Self.drained(watcher))
    #expect(watcher.takeAnnouncedHead() == 3)
    for payload in ["4", "999999", "18446744073709551615", "+3", "not a seq"] {
      Self.notify(payload, s)
      #expect(try Self.drained(watcher))
      #expect(watcher.takeAnnouncedHead() == nil, "NOTIFY msglog, '\(payload)'")
    }
    // A lie no higher than this process's own head says a head that is durable.
    Self.notify("2", s)
    #expect(try Self.drained(watcher))
    #expect(watcher.takeAnnouncedHead() == 2)
  }

  /// A lying `NOTIFY` neither stops nor moves a follower of the head: it
  /// goes on from the log's true head, through this process's commits and
  /// another's.
  @Test func aFollowerOfTheHeadTakesNoStrangersWord() throws {
    let s = Sandbox(.postgres)
    s.append("seed")
    let log = try EventLog(s.db)
    let seen = try Self.headsFollowed(of: log, until: 4) {
      for payload in ["999999", "18446744073709551615", "9223372036854775808"] { Self.notify(payload, s) }
      _ = try log.append("mine")
      s.append("another process")
      _ = try log.append("mine again")
    }
    #expect(seen.first == 1 && seen.last == 4 && seen == seen.sorted() && seen.allSatisfy { $0 <= 4 }, "\(seen)")
  }

  /// A commit that announces nothing — its writer killed between its
  /// `COMMIT` and the notification behind it, which an attacker's kill -9
  /// of one `serve` of two did, leaving the other's streams behind until
  /// the next write — is still seen: after a second without a
  /// notification the watcher reads the head. (The head is moved here by
  /// SQL alone, with no notification, and put back before the end.)
  @Test func aCommitNobodyAnnouncedIsSeenWithinASecondOrSo() throws {
    let s = Sandbox(.postgres)
    s.append("seed")
    let log = try EventLog(s.db)
    let database = s.databaseName!
    let seen = try Self.headsFollowed(of: log, until: 2) {
      #expect(PostgresCluster.psql("UPDATE msglog.head SET seq = 2 WHERE id = 1", database: database).code == 0)
    }
    #expect(seen == [1, 2], "\(seen)")
    #expect(PostgresCluster.psql("UPDATE msglog.head SET seq = 1 WHERE id = 1", database: database).code == 0)
    #expect(s.run(["verify"]).code == 0)
  }
}
