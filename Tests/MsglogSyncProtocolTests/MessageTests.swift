import MsglogCore
import MsglogSyncProtocol
import Testing

/// Each message of the sync protocol in its one encoding, read back by its
/// one decoding, and each way a body can fail to be one named in the order
/// the remote checks it.
@Suite struct MessageTests {
  static let log = ItemID(canonical: "9b80f034-76d9-42ff-9a9f-2dc87baf6f31")!
  static let replica = ItemID(canonical: "11111111-2222-4333-8444-555555555555")!
  static let item = ItemID(canonical: "aaaaaaaa-aaaa-4aaa-8aaa-aaaaaaaaaaaa")!
  static let secret = ReplicaSecret(hex: String(repeating: "ab", count: 32))!

  static func change(_ number: UInt64) -> ReplicaChange {
    ReplicaChange(
      number: number, made: .init(milliseconds: 1_000 * Int64(number)), basis: 3, stream: "main",
      intent: .remove(id: item))
  }

  static func text(_ bytes: [UInt8]) -> String { String(decoding: bytes, as: UTF8.self) }

  @Test func aHelloRoundTripsAndAnOlderOneHasItsFirstValues() throws {
    for hello in [
      RemoteHello(protocolVersion: 1, recordFormat: 3, log: Self.log, head: 42),
      RemoteHello(protocolVersion: 1, recordFormat: 1, log: nil, head: 0),
    ] {
      var json = JSONWriter()
      hello.write(to: &json)
      #expect(try RemoteHello(json: json.take()) == hello)
    }
    #expect(
      try RemoteHello(json: Array(#"{"protocol":1}"#.utf8))
        == RemoteHello(protocolVersion: 1, recordFormat: 1, log: nil, head: 0))
    #expect(throws: AnswerProblem.helloWithoutProtocol) { try RemoteHello(json: Array(#"{"head":3}"#.utf8)) }
    #expect(throws: AnswerProblem.notAnObject) { try RemoteHello(json: Array("[1]".utf8)) }
  }

  @Test func aPushRoundTrips() throws {
    let push = PushRequest(
      log: Self.log, replica: Self.replica, secret: Self.secret, changes: [Self.change(1), Self.change(2)])
    #expect(try PushRequest(json: push.json) == push)
    #expect(Self.text(push.json).hasPrefix(#"{"protocol":1,"log":"9b80f034-76d9-42ff-9a9f-2dc87baf6f31","replica":"#))
  }

  /// In the order the remote checks them: a newer protocol is refused
  /// before anything it may shape otherwise is read.
  @Test(arguments: [
    (#"{"protocol":1"#, "notJSON"),
    (#"[]"#, "notAnObject"),
    (#"{"protocol":1,"zz":1,"aa":2}"#, "unknownMember(aa)"),
    (#"{"log":"x"}"#, "noProtocol"),
    (#"{"protocol":"1"}"#, "noProtocol"),
    (#"{"protocol":2,"log":"x","changes":7}"#, "newerProtocol(2)"),
    (#"{"protocol":1,"log":"x"}"#, "notAnID(log)"),
    (#"{"protocol":1,"log":"9b80f034-76d9-42ff-9a9f-2dc87baf6f31"}"#, "notAnID(replica)"),
    (
      #"{"protocol":1,"log":"9b80f034-76d9-42ff-9a9f-2dc87baf6f31","replica":"11111111-2222-4333-8444-555555555555","secret":"AB"}"#,
      "malformedSecret"
    ),
    (
      #"{"protocol":1,"log":"9b80f034-76d9-42ff-9a9f-2dc87baf6f31","replica":"11111111-2222-4333-8444-555555555555","changes":{}}"#,
      "changesNotAnArray"
    ),
    (
      #"{"protocol":1,"log":"9b80f034-76d9-42ff-9a9f-2dc87baf6f31","replica":"11111111-2222-4333-8444-555555555555","changes":[{"change":1}]}"#,
      "malformedChange(1)"
    ),
  ])
  func aBodyThatIsNoPushIsNamedForWhy(body: String, problem: String) {
    do {
      _ = try PushRequest(json: Array(body.utf8))
      Issue.record("\(body) was taken as a push")
    } catch {
      let found: String
      switch error {
      case .notJSON: found = "notJSON"
      case .notAnObject: found = "notAnObject"
      case .unknownMember(let name): found = "unknownMember(\(name))"
      case .noProtocol: found = "noProtocol"
      case .newerProtocol(let version): found = "newerProtocol(\(version))"
      case .notAnID(let member): found = "notAnID(\(member))"
      case .malformedSecret: found = "malformedSecret"
      case .changesNotAnArray: found = "changesNotAnArray"
      case .tooManyChanges(let count): found = "tooManyChanges(\(count))"
      case .malformedChange(let position, _): found = "malformedChange(\(position))"
      }
      #expect(found == problem, "\(body)")
    }
  }

  @Test func aPushPastItsBoundIsRefusedByItsCount() {
    let changes = (1...UInt64(SyncProtocol.pushChanges + 1)).map(Self.change)
    let push = PushRequest(log: Self.log, replica: Self.replica, secret: Self.secret, changes: changes)
    #expect(throws: PushRequest.Problem.tooManyChanges(SyncProtocol.pushChanges + 1)) {
      try PushRequest(json: push.json)
    }
  }

  /// Every outcome as the remote writes it and a replica reads it: a
  /// refusal by its code and data, with the remote's words beside it; one
  /// kept in words only (by a remote before codes) with its words alone.
  @Test func anAnswerRoundTripsWithItsRefusalsByCode() throws {
    let push = PushRequest(log: Self.log, replica: Self.replica, secret: Self.secret, changes: (1...5).map(Self.change))
    let removed = MsglogError.itemRemoved(Self.item, removeSeq: 9)
    let answer = PushAnswer(
      head: 12,
      outcomes: [
        .applied(seq: 11, rebased: false), .applied(seq: 12, rebased: true), .unchanged, .refused(.error(removed)),
        .refused(.unknown(code: nil, words: "an older remote's words")),
      ])
    let json = answer.json(answering: push, words: \.description)
    #expect(try PushAnswer(json: json) == answer)
    // The words are the remote's to make, beside the code.
    let worded = Self.text(answer.json(answering: push, words: { "<\($0.code ?? "none")>" }))
    #expect(worded.contains(#""seq":9},"error":"<item-removed>"}"#) && worded.contains(#""error":"<none>"}"#))
    let text = Self.text(json)
    #expect(
      text.contains(
        #"{"change":4,"result":"refused","reason":{"code":"item-removed","id":"aaaaaaaa-aaaa-4aaa-8aaa-aaaaaaaaaaaa","seq":9},"error":"item aaaaaaaa-aaaa-4aaa-8aaa-aaaaaaaaaaaa was already removed (at seq 9)"}"#
      ), "\(text)")
    #expect(text.contains(#"{"change":5,"result":"refused","error":"an older remote's words"}"#), "\(text)")
    #expect(text.hasPrefix(#"{"head":12,"outcomes":[{"change":1,"result":"applied","seq":11,"rebased":false}"#))
  }

  /// A newer remote's code this msglog does not know is kept as that code
  /// with the remote's words; an answer from before codes by its words.
  @Test func aRefusalThisMsglogCannotTellKeepsTheRemotesWords() throws {
    let answer = try PushAnswer(
      json: Array(
        #"{"head":3,"outcomes":[{"change":1,"result":"refused","reason":{"code":"stream-forbidden","token":"ann"},"error":"token ann may not write stream 'hr'"},{"change":2,"result":"refused","error":"item x was already removed (at seq 2)"},{"change":3,"result":"refused"},{"change":4,"result":"refused","reason":{"code":"item-removed","id":"not a uuid","seq":2},"error":"w"}]}"#
          .utf8))
    #expect(
      answer.outcomes == [
        .refused(.unknown(code: "stream-forbidden", words: "token ann may not write stream 'hr'")),
        .refused(.unknown(code: nil, words: "item x was already removed (at seq 2)")),
        .refused(.unknown(code: nil, words: "refused")),
        .refused(.unknown(code: "item-removed", words: "w")),
      ])
  }

  @Test(arguments: [
    (#"{"outcomes":[]}"#, AnswerProblem.pushWithoutHeadOrOutcomes),
    (#"{"head":1,"outcomes":[1]}"#, .outcomeNotAnObject),
    (#"{"head":1,"outcomes":[{"change":1,"result":"applied"}]}"#, .appliedWithoutSeq),
    (#"{"head":1,"outcomes":[{"change":1,"result":"lost"}]}"#, .unknownResult),
    ("not json", .notAnObject),
  ])
  func anAnswerThatIsNoneIsNamedForWhy(body: String, problem: AnswerProblem) {
    #expect(throws: problem) { try PushAnswer(json: Array(body.utf8)) }
  }

  @Test func aPullRoundTripsThroughItsQuery() throws {
    for pull in [
      PullRequest(log: Self.log, after: 7, check: 0x0a0b_0c0d, limit: 100),
      PullRequest(log: Self.log, after: 0, check: nil, limit: 0),
    ] {
      let query = Self.query(pull.target)
      #expect(pull.target.hasPrefix(SyncProtocol.pullPath + "?"))
      #expect(try PullRequest(query: { query[$0] }) == pull)
    }
    let defaults = try PullRequest(query: { ["log": Self.log.text][$0] })
    #expect(defaults == PullRequest(log: Self.log, after: 0, check: nil, limit: SyncProtocol.pageRecords))
  }

  @Test(arguments: [
    ([:], PullRequest.Problem.noLog),
    (["log": "x"], .noLog),
    (["log": log.text, "after": "-1"], .notANumber(member: "after", text: "-1")),
    (["log": log.text, "limit": "4097"], .limitOutOfRange),
    (["log": log.text, "limit": "x"], .notANumber(member: "limit", text: "x")),
    (["log": log.text, "check": "abc"], .malformedCheck),
  ])
  func aQueryThatIsNoPullIsNamedForWhy(query: [String: String], problem: PullRequest.Problem) {
    #expect(throws: problem) { try PullRequest(query: { query[$0] }) }
  }

  @Test func aRefusalOfTheWholeCallIsReadByItsKind() {
    let secret = SyncRefusal(.replicaSecret, "the secret sent is not replica …'s", replica: Self.replica)
    #expect(secret.status == 403)
    #expect(SyncRefusal(status: 403, json: secret.json) == secret)
    #expect(SyncRefusal(status: 409, json: secret.json) == nil, "a secret's kind on another status is no refusal")
    let another = SyncRefusal(.anotherLog, "its log's id is not the one the replica was cloned from")
    #expect(another.status == 409 && SyncRefusal(status: 409, json: another.json) == another)
    #expect(
      Self.text(another.json)
        == #"{"error":"its log's id is not the one the replica was cloned from","kind":"another-log"}"#)
    #expect(SyncRefusal(status: 409, json: Array(#"{"error":"x","kind":"sideways"}"#.utf8)) == nil)
    #expect(SyncRefusal(status: 409, json: Array(#"{"kind":"incompatible"}"#.utf8))?.message == "it answered 409")
  }

  @Test func theVersionCheckBothEndsMake() {
    #expect(SyncProtocol.speaks(0) && SyncProtocol.speaks(SyncProtocol.version))
    #expect(!SyncProtocol.speaks(SyncProtocol.version + 1))
    #expect(!SyncProtocol.speaks(UInt64.max))
    #expect(SyncProtocol.helloTarget == "/api/sync?protocol=1")
  }

  static func query(_ target: String) -> [String: String] {
    var members: [String: String] = [:]
    for pair in target.split(separator: "?", maxSplits: 1)[1].split(separator: "&") {
      let parts = pair.split(separator: "=", maxSplits: 1)
      members[String(parts[0])] = String(parts[1])
    }
    return members
  }
}
