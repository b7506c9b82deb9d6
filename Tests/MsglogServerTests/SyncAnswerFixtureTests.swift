import Foundation
import Msglog
import MsglogTestSupport
import Testing

/// The answers of a real `msglog serve` to the sync protocol's calls,
/// recorded into `Tests/Page/Fixtures/sync-answers.json`, which the page's
/// node tests feed its outbox (`Tests/Page/sync-answers.test.mjs`): a push
/// with every outcome (applied, rebased, unchanged, each refusal by its
/// code), the same push resent, and the calls refused whole (another
/// secret, another log, a newer protocol, a change out of order).
///
/// `theFixturesAreWhatTheServerAnswers` asks a fresh server, on each
/// store, and finds the file byte for byte, so the page's tests cannot
/// drift from the server. After a change to what the server answers,
/// record them again:
///
///     MSGLOG_RECORD_PAGE_FIXTURES=1 scripts/test --filter SyncAnswerFixtureTests
@Suite(.serialized) struct SyncAnswerFixtureTests {
  static let path = repositoryRoot + "/Tests/Page/Fixtures/sync-answers.json"
  /// The log's id, which each server makes anew, as the file has it.
  static let logPlaceholder = "<log>"
  static let anotherLog = "0b80f034-76d9-42ff-9a9f-2dc87baf6f31"
  static let replica = "11111111-2222-4333-8444-555555555555"
  static let secret = String(repeating: "5e", count: 32)
  static let made = "2026-12-01T12:00:00.000Z"
  static let (a, b, gone) = (
    "aaaaaaaa-aaaa-4aaa-8aaa-aaaaaaaaaaaa", "bbbbbbbb-bbbb-4bbb-8bbb-bbbbbbbbbbbb",
    "dddddddd-dddd-4ddd-8ddd-dddddddddddd"
  )

  /// One call of the protocol and its answer.
  struct Exchange {
    var name: String
    var method: String
    var path: String
    var request: String?
    var status: Int
    var body: String
  }

  /// A change as a replica pushes it, its members in a fixed order.
  static func change(_ number: Int, _ members: String) -> String {
    #"{"change":\#(number),"made":"\#(made)","basis":1,"stream":"main",\#(members)}"#
  }

  static func push(log: String, protocolVersion: Int = 1, secret: String = secret, _ changes: [String]) -> String {
    #"{"protocol":\#(protocolVersion),"log":"\#(log)","replica":"\#(replica)","secret":"\#(secret)","changes":[\#(changes.joined(separator: ","))]}"#
  }

  /// The calls, in order, against a server whose log holds one message.
  static func exchanges(on served: ServedLog) throws -> [Exchange] {
    var exchanges: [Exchange] = []
    func call(_ name: String, _ method: String, _ path: String, _ request: String? = nil) {
      let reply = served.request(method, path, request)
      exchanges.append(
        Exchange(name: name, method: method, path: path, request: request, status: reply.status, body: reply.body))
    }
    call("hello", "GET", "/api/sync?protocol=1")
    let log = try #require(
      (try JSONSerialization.jsonObject(with: Data(exchanges[0].body.utf8)) as? [String: Any])?["log"] as? String)
    let changes = [
      change(1, #""op":"append","id":"\#(a)","text":"first","seen":1"#),
      // Seen at the top, it lands after what was there: rebased.
      change(2, #""op":"append","id":"\#(b)","text":"second","seen":0"#),
      change(3, #""op":"move","id":"\#(b)","from":2,"to":0,"after":[]"#),
      change(4, #""op":"edit","id":"\#(a)","text":"first""#),
      change(5, #""op":"remove","id":"\#(gone)""#),
      change(6, #""op":"remove","id":"\#(a)""#),
      change(7, #""op":"edit","id":"\#(a)","text":"too late""#),
      change(8, #""op":"append","id":"\#(gone)","text":"","seen":3"#),
      change(9, #""op":"restore","id":"\#(b)","seen":0"#),
    ]
    call("push", "POST", "/api/sync/push", push(log: log, changes))
    call("push-resent", "POST", "/api/sync/push", push(log: log, changes))
    call(
      "replica-secret", "POST", "/api/sync/push",
      push(log: log, secret: String(repeating: "0f", count: 32), [change(10, #""op":"remove","id":"\#(b)""#)]))
    call(
      "another-log", "POST", "/api/sync/push",
      push(log: anotherLog, [change(10, #""op":"remove","id":"\#(b)""#)]))
    call(
      "newer-protocol", "POST", "/api/sync/push",
      push(log: log, protocolVersion: 2, [change(10, #""op":"remove","id":"\#(b)""#)]))
    call(
      "out-of-order", "POST", "/api/sync/push", push(log: log, [change(12, #""op":"remove","id":"\#(b)""#)]))
    // The ids a file may hold are the test's own: the log's is the placeholder.
    return exchanges.map { exchange in
      var exchange = exchange
      exchange.path = exchange.path.replacing(log, with: logPlaceholder)
      exchange.request = exchange.request?.replacing(log, with: logPlaceholder)
      exchange.body = exchange.body.replacing(log, with: logPlaceholder)
      return exchange
    }
  }

  /// The exchanges as the file holds them: one a line, the request and the
  /// answer's body as the bytes sent (each is JSON, so the file is too).
  static func file(_ exchanges: [Exchange]) -> String {
    func quoted(_ text: String) -> String {
      String(
        decoding: try! JSONSerialization.data(
          withJSONObject: text, options: [.fragmentsAllowed, .withoutEscapingSlashes]), as: UTF8.self)
    }
    let lines = exchanges.map { e in
      #"{"name":\#(quoted(e.name)),"method":\#(quoted(e.method)),"path":\#(quoted(e.path)),"request":\#(e.request ?? "null"),"status":\#(e.status),"body":\#(e.body)}"#
    }
    return "[\n" + lines.joined(separator: ",\n") + "\n]\n"
  }

  static func answers(_ store: Store) throws -> String {
    let server = Sandbox(store)
    server.append("hello")
    let served = try ServedLog.running(server)
    defer { _ = served.stop() }
    return file(try exchanges(on: served))
  }

  @Test(.enabled(if: ProcessInfo.processInfo.environment["MSGLOG_RECORD_PAGE_FIXTURES"] != nil))
  func recordTheAnswers() throws {
    let text = try Self.answers(.lmdb)
    try text.write(toFile: Self.path, atomically: true, encoding: .utf8)
  }

  @Test(arguments: Store.allCases) func theFixturesAreWhatTheServerAnswers(store: Store) throws {
    var recorded = try String(contentsOfFile: Self.path, encoding: .utf8)
    if store == .postgres {
      // The one difference between the stores: a hello names the newest
      // record format the log holds — framed (4) in an LMDB log made now,
      // whole (3) on PostgreSQL, which keeps whole records.
      recorded = recorded.replacingOccurrences(of: #""format":4,"log""#, with: #""format":3,"log""#)
    }
    let answered = try Self.answers(store)
    #expect(
      answered == recorded,
      "the server answers otherwise than Tests/Page/Fixtures/sync-answers.json: MSGLOG_RECORD_PAGE_FIXTURES=1 scripts/test --filter SyncAnswerFixtureTests records it again\n\(answered)"
    )
  }
}
