import Foundation
import Msglog
import MsglogCore
import MsglogTestSupport
import Synchronization
import Testing

@testable import MsglogLMDB

/// Tables opened when first needed (named tokens', sync's) in a process
/// whose threads read at once (`serve`): LMDB lets one transaction at a
/// time open a table, and a table opened after a transaction began is not
/// that transaction's to use (`Transaction.openTable`). A helper attacking
/// `serve` had 32 requests present the first token at once: some were
/// answered 503 "invalid argument".
@Suite struct TableOpeningTests {
  /// A read begun before another transaction of the process opened the
  /// tokens table (the write that made it) runs again, and finds the token.
  @Test func aReadBegunBeforeATableWasOpenedRunsAgainAndReadsIt() throws {
    let dir = TemporaryDirectory()
    let log = try EventLog(dir.db)
    try log.append("x")
    let began = DispatchSemaphore(value: 0)
    let opened = DispatchSemaphore(value: 0)
    let runs = Atomic(0)
    let added = Mutex<String?>(nil)
    let outcome = Mutex<Result<NamedToken?, any Error>?>(nil)
    let reader = Thread {
      let result = Result {
        try log.read { snapshot -> NamedToken? in
          let tokens = try #require(snapshot.storeReader as? any TokenTableReader)
          if runs.add(1, ordering: .relaxed).newValue == 1 {
            // Holds this transaction open while the token is added.
            began.signal()
            opened.wait()
          }
          return try tokens.token(id: added.withLock { $0 } ?? "")
        }
      }
      outcome.withLock { $0 = result }
    }
    reader.start()
    began.wait()
    let token = try log.addToken(named: "ann", scopes: TokenScopes(write: [.every])).token
    added.withLock { $0 = token.id }
    opened.signal()
    // Bounded: a read that never ends (a lock never let go) fails the test.
    let deadline = Date().addingTimeInterval(30)
    while outcome.withLock({ $0 }) == nil, Date() < deadline { usleep(1_000) }
    let result = try #require(outcome.withLock { $0 }, "the read did not end within 30 s")
    #expect(try result.get()?.id == token.id)
    #expect(runs.load(ordering: .relaxed) == 2)
  }

  /// 16 threads read the tokens again and again while the first token is
  /// added: every read answers, none with an error.
  @Test func readersWhileTheFirstTokenIsAddedAllAnswer() throws {
    let dir = TemporaryDirectory()
    let log = try EventLog(dir.db)
    try log.append("x")
    let stop = Atomic(false)
    let failures = Mutex<[String]>([])
    let reads = Atomic(0)
    let finished = Atomic(0)
    let threads = (0..<16).map { _ in
      Thread {
        defer { finished.add(1, ordering: .relaxed) }
        while !stop.load(ordering: .relaxed) {
          do {
            _ = try log.read { snapshot in
              try (snapshot.storeReader as? any TokenTableReader)?.token(id: "0123456789abcdef")
            }
            reads.add(1, ordering: .relaxed)
          } catch {
            failures.withLock { $0.append("\(error)") }
          }
        }
      }
    }
    threads.forEach { $0.start() }
    usleep(20_000)
    _ = try log.addToken(named: "ann", scopes: TokenScopes(write: [.every]))
    usleep(50_000)
    stop.store(true, ordering: .relaxed)
    let deadline = Date().addingTimeInterval(30)
    while finished.load(ordering: .relaxed) < threads.count, Date() < deadline { usleep(1_000) }
    #expect(finished.load(ordering: .relaxed) == threads.count, "readers still reading after 30 s")
    #expect(failures.withLock { $0 }.isEmpty, "\(failures.withLock { $0 }.prefix(3))")
    #expect(reads.load(ordering: .relaxed) > 16)
  }

  /// Two tokens added at once to a log that had none: neither `addToken`
  /// returns before the first token's commit is a quarter second old (and
  /// its margin), when no `serve` still lets a request without a token in
  /// on an older "no tokens" (`EventLog.tokenlessAnswerLifetime`).
  @Test func tokensAddedWithTheFirstWaitItOutToo() throws {
    let dir = TemporaryDirectory()
    let log = try EventLog(dir.db)
    try log.append("x")
    let returned = Mutex<[(made: Int64, at: Int64)]>([])
    let finished = Atomic(0)
    for name in ["ann", "bob"] {
      Thread {
        defer { finished.add(1, ordering: .relaxed) }
        guard let added = try? log.addToken(named: name, scopes: TokenScopes(write: [.every])) else { return }
        returned.withLock { $0.append((added.token.made.milliseconds, Timestamp.now().milliseconds)) }
      }.start()
    }
    let deadline = Date().addingTimeInterval(30)
    while finished.load(ordering: .relaxed) < 2, Date() < deadline { usleep(1_000) }
    let adds = returned.withLock { $0 }
    try #require(adds.count == 2, "\(adds)")
    let first = adds.map(\.made).min()!
    let wait = Int64(EventLog.tokenlessAnswerLifetime / 1_000_000)
    for add in adds {
      #expect(add.at - first >= wait, "a token add returned \(add.at - first) ms after the first token was made")
    }
  }
}
