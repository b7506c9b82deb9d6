import Foundation
import Msglog
import MsglogTestSupport
import Testing

@testable import MsglogPostgres

/// A long-running process writes on what its own last write left known
/// (no round trip before the commit); the commit checks that the head row
/// is as that write left it. Other writers in between, and a rebuild, must
/// send it the ordinary way: never a forked log, never a stale tree.
@Suite struct PostgresKnownStateTests {
  /// An app's `EventLog` and `msglog` processes take turns on two streams,
  /// with inserts, moves and removes (the app's tree paths are what it
  /// knows): every outcome the app got is in the log at its seq, the seqs
  /// are gapless, and `verify` finds the derived tables right.
  @Test func otherWritersBetweenAnAppsWritesAreSeen() throws {
    let s = Sandbox(.postgres)
    let log = try EventLog(s.db)
    var mine: [UInt64: String] = [:]
    for i in 0..<30 {
      let stream = StreamName(i % 3 == 0 ? "other" : "main")
      let outcome = try log.append("app \(i)", to: stream)
      mine[outcome.event.seq] = outcome.event.id.text
      if i % 4 == 1, let moved = try log.move(from: 0, to: i / 2, in: stream) {
        mine[moved.event.seq] = moved.event.id.text
      }
      if i % 5 == 2 {
        let removed = try log.remove(id: try log.items(of: stream).items[0].id, from: stream)
        mine[removed.event.seq] = removed.event.id.text
      }
      if i % 2 == 0 {
        #expect(s.run(["append", "--stream", stream.text, "process \(i)"]).code == 0)
        if i % 6 == 0 { #expect(s.run(["move", "--stream", stream.text, "0", "1"]).code == 0) }
      }
    }
    let lines = s.run(["log", "--all", "--json"]).lines.map {
      (try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any]) ?? [:]
    }
    #expect(lines.map { $0["seq"] as? Int ?? -1 } == Array(1...lines.count))
    for (seq, id) in mine {
      #expect(lines[Int(seq) - 1]["id"] as? String == id, "the app's seq \(seq) holds another event")
    }
    let r = s.run("verify")
    #expect(r.code == 0, "\(r)")
  }

  /// Two processes' writes taking turns (two `serve`s behind a balancer):
  /// a write on what its process knew fails whenever the other wrote since
  /// — an ERROR line in PostgreSQL's log each time, which a team lead saw
  /// for nearly every write. After one such failure a process locks the
  /// head as it opens for a second: at most one failure a second each
  /// (counted against the time the turns took), not one a write.
  @Test func writersTakingTurnsFailOnWhatTheyKnewAtMostOnceASecond() throws {
    let s = Sandbox(.postgres)
    let logs = [try EventLog(s.db), try EventLog(s.db)]
    let stores = try logs.map { try #require($0.store as? PostgresStore) }
    #expect(stores[0] !== stores[1], "two processes' stores")
    let started = ContinuousClock.now
    for i in 0..<60 { try logs[i % 2].append("turn \(i)") }
    let seconds = Int((ContinuousClock.now - started).components.seconds) + 1
    let moved = stores.map { store in store.nextWrite.withLock { $0.headsMoved } }
    #expect(moved.reduce(0, +) >= 1, "the turns never met")
    #expect(moved.reduce(0, +) <= 2 * seconds, "\(moved) heads moved in \(seconds) s of turns")
    #expect(try logs[0].headSeq() == 60)
    let r = s.run("verify")
    #expect(r.code == 0 && r.stdout.hasPrefix("ok: 60 events"), "\(r)")
  }

  /// The derived tables rebuilt by another process (`verify --repair`
  /// after a damage) between two of an app's writes: the app's next write
  /// goes the ordinary way and the log verifies.
  @Test func aRebuildBetweenAnAppsWritesIsSeen() throws {
    let s = Sandbox(.postgres)
    let log = try EventLog(s.db)
    for i in 0..<5 { try log.append("before \(i)") }
    let name = String(s.db.split(separator: "/").last!)
    #expect(PostgresCluster.psql("DELETE FROM msglog.ids", database: name).code == 0)
    #expect(s.run(["verify", "--repair"]).code == 0)
    for i in 0..<5 { try log.append("after \(i)") }
    try log.move(from: 0, to: 9)
    let r = s.run("verify")
    #expect(r.code == 0 && r.stdout.hasPrefix("ok: 11 events"), "\(r)")
  }

  /// What an app's write decides on what it knew without writing — a
  /// refusal, or nothing to do — is decided again on the log as it is: an
  /// undo of an event another process appended since is not refused as
  /// beyond the head, and an edit back to the text another process
  /// replaced is an edit, not nothing.
  @Test func aDecisionThatWritesNothingIsTakenOnTheLogAsItIs() throws {
    let s = Sandbox(.postgres)
    let log = try EventLog(s.db)
    let first = try log.append("first")
    try log.append("second")
    #expect(s.run(["append", "third"]).code == 0)
    let undone = try log.undo(3)
    #expect(undone?.event.undoes == 3, "\(String(describing: undone))")
    #expect(s.run(["edit", first.event.id.text, "changed"]).code == 0)
    let edited = try log.edit(.id(first.event.id), text: "first")
    #expect(edited != nil, "the edit back was taken for nothing")
    #expect(try log.items().items.map(\.text) == ["first", "second"])
    #expect(throws: MsglogError.self) { try log.undo(99) }
  }
}
