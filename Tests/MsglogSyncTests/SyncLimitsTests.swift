import Foundation
import Msglog
import MsglogTestSupport
import Testing

/// Nothing a peer sends is trusted (docs/SYNC.md, issue 34 item 1): a push
/// passes the limits every write is held to, each bad change refused as a
/// change, done for good, while every replica goes on syncing; a record
/// past them that a log holds anyway is named by `verify`, and a replica
/// pulling it says the remote is at fault (exit 1), not its user (exit 64).
@Suite(.serialized) struct SyncLimitsTests {
  /// A bad change, and the words its refusal must carry.
  struct BadChange: CustomStringConvertible, Sendable {
    let name: String
    let text: String
    let sender: String?
    let made: String?
    let reason: String
    var description: String { name }
  }

  static let badChanges = [
    BadChange(name: "empty text", text: "", sender: nil, made: nil, reason: "message text is empty"),
    BadChange(
      name: "1,100,000-byte text", text: String(repeating: "x", count: 1_100_000), sender: nil, made: nil,
      reason: "message text is 1100000 bytes; the limit is 1048576 bytes (1 MiB)"),
    BadChange(name: "empty sender", text: "hi", sender: "", made: nil, reason: "sender is empty"),
    BadChange(
      name: "2,000-byte sender", text: "hi", sender: String(repeating: "s", count: 2000), made: nil,
      reason: "sender is 2000 bytes; the limit is 1024 bytes"),
    BadChange(
      name: "made before 1970", text: "hi", sender: nil, made: "1969-12-31T23:59:59.000Z",
      reason: "the change was made at 1969-12-31T23:59:59.000Z, before 1970"),
    BadChange(
      name: "made two days ahead", text: "hi", sender: nil,
      made: Timestamp(milliseconds: Timestamp.now().milliseconds + 2 * 86_400_000).rfc3339,
      reason: "more than a day after"),
  ]

  /// A raw push of one bad change under a fresh replica id is answered
  /// `refused` with its reason, and again so when resent; nothing is
  /// appended, and an existing replica, a new clone, `export | import` and
  /// `verify` all go on. On msglog before this check the push was
  /// `applied`, and every replica's `sync` then exited 64.
  @Test(arguments: Store.allCases, badChanges)
  func aBadPushedChangeIsRefusedAsAChange(store: Store, bad: BadChange) throws {
    let server = Sandbox(store)
    server.append("hello")
    let served = try ServedLog.running(server)
    defer { _ = served.stop() }
    let url = try #require(served.url)
    let replica = Sandbox()
    #expect(replica.run(["clone", url]).code == 0)
    let before = server.export()

    let log = try RawSync.logID(of: served)
    let (id, secret) = (UUID().uuidString.lowercased(), RawSync.newSecret())
    var change = RawSync.append(1, text: bad.text, sender: bad.sender)
    if let made = bad.made { change["made"] = made }
    let first = try RawSync.push(served, log: log, replica: id, secret: secret, changes: [change])
    #expect(first.status == 200, "\(first.status) \(first.body.prefix(300))")
    let outcomes = try RawSync.outcomes(first)
    #expect(outcomes.count == 1 && outcomes[0]["result"] as? String == "refused", "\(first.body.prefix(300))")
    #expect((outcomes[0]["error"] as? String)?.contains(bad.reason) == true, "\(first.body.prefix(300))")
    // Done for good: the same answer, nothing appended.
    let again = try RawSync.push(served, log: log, replica: id, secret: secret, changes: [change])
    #expect(again.status == 200 && again.body == first.body, "\(again.status) \(again.body.prefix(300))")
    #expect(server.export() == before)

    // Every replica goes on.
    replica.append("from the replica")
    let sync = replica.run(["sync"])
    #expect(sync.code == 0 && sync.stdout.hasPrefix("pushed 1 (0 rebased, 0 refused)"), "\(sync)")
    #expect(replica.export() == server.export())
    let fresh = Sandbox()
    let clone = fresh.run(["clone", url])
    #expect(clone.code == 0, "\(clone)")
    let copy = Sandbox()
    #expect(copy.run(["import"], stdin: Data(server.export().utf8)).code == 0)
    for sandbox in [server, replica, fresh] {
      let verify = sandbox.run(["verify"])
      #expect(verify.code == 0, "\(verify)")
    }
  }

  /// The nil UUID is no replica's id: the whole push is refused (400),
  /// nothing done.
  @Test func theNilReplicaIsRefused() throws {
    let server = Sandbox()
    server.append("hello")
    let served = try ServedLog.running(server)
    defer { _ = served.stop() }
    let before = server.export()
    let reply = try RawSync.push(
      served, log: try RawSync.logID(of: served), replica: "00000000-0000-0000-0000-000000000000",
      secret: RawSync.newSecret(), changes: [RawSync.append(1, text: "hi")])
    #expect(reply.status == 400 && reply.body.contains("the nil UUID is no replica's id"), "\(reply)")
    #expect(server.export() == before)
  }

  /// A pull page of long records ends where the replica's rule says (a
  /// record starts only while the page holds less than 1 MiB, the first
  /// aside). The server counted each piece of 256 records it read from
  /// zero and so sent up to 255 records past that, which every replica
  /// refused ("its pull answer ran past 1048576 bytes"): a log holding
  /// more than 1 MiB in 4,096 events could be neither cloned nor pulled,
  /// and a replica behind never learned an erase.
  @Test(arguments: Store.allCases)
  func pagesOfLongMessagesAreTakenByTheReplica(store: Store) throws {
    let server = Sandbox(store)
    let lines = { (tag: String) in
      Data((0..<900).map { "\(tag) \($0) " + String(repeating: "m", count: 1500) + "\n" }.joined().utf8)
    }
    #expect(server.run(["append", "--lines"], stdin: lines("first")).code == 0)
    let served = try ServedLog.running(server)
    defer { _ = served.stop() }
    let url = try #require(served.url)
    let replica = Sandbox()
    let clone = replica.run(["clone", url])
    #expect(clone.code == 0, "\(clone)")
    #expect(server.run(["append", "--lines"], stdin: lines("second")).code == 0)
    let sync = replica.run(["sync"])
    #expect(sync.code == 0, "\(sync)")
    let same = replica.export() == server.export()
    #expect(same, "the replica does not hold what the server holds")

    // Each page as the server sends it: under 1 MiB when its last record began.
    let log = try RawSync.logID(of: served)
    let file = replica.dir + "/page"
    #expect(shell("curl -sf -o '\(file)' '\(url)/api/sync/pull?log=\(log)&after=0&limit=4096'") == 0)
    let page = [UInt8](try Data(contentsOf: URL(fileURLWithPath: file)))
    var lengths: [Int] = []
    var at = 0
    while at + 4 <= page.count {
      let length = page[at..<at + 4].reduce(0) { $0 << 8 | Int($1) }
      lengths.append(length)
      at += 4 + length
    }
    #expect(at == page.count, "the page ends inside a frame")
    #expect(lengths.count > 1 && lengths.count < 1800, "\(lengths.count) records")
    let before = lengths.dropLast().reduce(0, +)
    #expect(before < 1 << 20, "\(before) bytes before the page's last record")
  }

  /// What a record rewritten behind msglog's back breaks.
  enum Poison: String, CaseIterable, Sendable {
    case emptyText, longSender, madeBefore1970

    var reason: String {
      switch self {
      case .emptyText: return "message text is empty"
      case .longSender: return "sender is 2000 bytes; the limit is 1024 bytes"
      case .madeBefore1970: return "before 1970"
      }
    }
  }

  /// A log that holds a record past the limits (what a push left before
  /// pushes were checked): `verify` names it (exit 1); a replica that pulls
  /// it — syncing, or cloning — names the remote and the seq and exits 1,
  /// changing nothing (before: exit 64, "message text is empty", and a
  /// clean `verify`).
  @Test(arguments: Store.allCases, Poison.allCases)
  func aRecordPastTheLimitsIsTheRemotesFault(store: Store, poison: Poison) throws {
    let server = Sandbox(store)
    server.append("hello")
    let served = try ServedLog.running(server)
    defer { _ = served.stop() }
    let url = try #require(served.url)
    let replica = Sandbox()
    #expect(replica.run(["clone", url]).code == 0)
    // Seq 2 comes from a replica's change (it has an origin), seq 3 after it.
    let writer = Sandbox()
    #expect(writer.run(["clone", url]).code == 0)
    writer.append("from a replica", sender: "ann")
    #expect(writer.run(["sync"]).code == 0)
    server.append("after it")
    try RawSync.rewriteRecord(server, seq: 2) { event in
      guard case .insert(let id, let index, let text, _) = event.op else { return }
      switch poison {
      case .emptyText: event.op = .insert(id: id, index: index, text: "", sender: "ann")
      case .longSender: event.op = .insert(id: id, index: index, text: text, sender: String(repeating: "s", count: 2000))
      case .madeBefore1970: event.origin?.made = Timestamp(milliseconds: -1000)
      }
    }
    let verify = server.run(["verify"])
    #expect(verify.code == 1 && verify.stdout.contains("seq 2: ") && verify.stdout.contains(poison.reason), "\(verify)")

    let before = (replica.export(), replica.run(["status", "--json"]).stdout)
    let sync = replica.run(["sync"])
    let fault = "msglog: \(url) sent a record this replica cannot accept, at seq 2: "
    #expect(sync.code == 1 && sync.stderr.contains(fault) && sync.stderr.contains(poison.reason), "\(sync)")
    #expect(sync.stdout.isEmpty)
    #expect((replica.export(), replica.run(["status", "--json"]).stdout) == before, "the replica took nothing in")
    let fresh = Sandbox()
    let clone = fresh.run(["clone", url])
    #expect(clone.code == 1 && clone.stderr.contains(fault) && clone.stderr.contains(poison.reason), "\(clone)")
    #expect(fresh.isEmpty)
  }
}
