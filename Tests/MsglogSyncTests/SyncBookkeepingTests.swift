import Foundation
import Msglog
import MsglogTestSupport
import Testing

/// What replicas leave at a server beside the events (issue 34 items 7 and
/// 8): a refused change appends nothing, yet its outcome is kept so that a
/// resend gets the same answer. What one replica id can leave is bounded
/// (what it settled is forgotten when it pushes on), the whole is counted
/// in `streams` and `/metrics`, and the metrics count what a push did.
@Suite(.serialized) struct SyncBookkeepingTests {
  /// `streams --json`'s `"sync"` member.
  static func bookkeeping(_ s: Sandbox) throws -> [String: Int] {
    let run = s.run(["streams", "--json"])
    let object = try JSONSerialization.jsonObject(with: Data(run.stdout.utf8)) as? [String: Any]
    return object?["sync"] as? [String: Int] ?? [:]
  }

  /// One sample of `/metrics`.
  static func metric(_ served: ServedLog, _ name: String) -> Double? {
    let text = served.request("GET", "/metrics").body
    let line = text.split(separator: "\n").first { $0.hasPrefix(name + " ") }
    return line.flatMap { Double($0.split(separator: " ").last!) }
  }

  /// 40 fresh replica ids each push 256 removes of an item that is not
  /// there (all refused): `streams` and `/metrics` count 40 replicas and
  /// their 10,240 outcomes and bytes, where nothing showed them before.
  /// One id pushing ten such batches in a row keeps only its last one's
  /// 256: what it settled is forgotten (before: 2,560 kept).
  @Test(arguments: Store.allCases)
  func refusedChangesAreBoundedAndCounted(store: Store) throws {
    let server = Sandbox(store)
    let gone = server.append("gone")
    #expect(server.run(["remove", gone]).code == 0)
    let served = try ServedLog.running(server)
    defer { _ = served.stop() }
    let log = try RawSync.logID(of: served)
    #expect(try Self.bookkeeping(server).isEmpty, "no replica pushed yet")

    for _ in 0..<40 {
      let reply = try RawSync.push(
        served, log: log, replica: UUID().uuidString.lowercased(), secret: RawSync.newSecret(),
        changes: (1...256).map { RawSync.remove($0, id: gone) })
      #expect(reply.status == 200 && !reply.body.contains(#""applied""#), "\(reply.status)")
    }
    var counted = try Self.bookkeeping(server)
    #expect(counted["replicas"] == 40 && counted["outcomes"] == 40 * 256, "\(counted)")
    #expect((counted["bytes"] ?? 0) > 40 * 256 * 16, "\(counted)")
    let text = server.run(["streams"])
    #expect(text.stdout.contains("sync: 40 replicas, 10240 outcomes kept, "), "\(text)")
    #expect(Self.metric(served, "msglog_sync_replicas") == 40)
    #expect(Self.metric(served, "msglog_sync_outcomes") == 10_240)
    #expect((Self.metric(served, "msglog_sync_bookkeeping_bytes") ?? 0) > 0)

    let (one, secret) = (UUID().uuidString.lowercased(), RawSync.newSecret())
    for batch in 0..<10 {
      let reply = try RawSync.push(
        served, log: log, replica: one, secret: secret,
        changes: (1...256).map { RawSync.remove(batch * 256 + $0, id: gone) })
      #expect(reply.status == 200, "\(reply.status)")
    }
    counted = try Self.bookkeeping(server)
    #expect(counted["replicas"] == 41 && counted["outcomes"] == 40 * 256 + 256, "\(counted)")
    // A resend of a change it settled cannot be answered any more: refused, nothing done.
    let stale = try RawSync.push(served, log: log, replica: one, secret: secret, changes: [RawSync.remove(1, id: gone)])
    #expect(stale.status == 409 && stale.body.contains("was settled by its replica"), "\(stale)")
    let verify = server.run(["verify"])
    #expect(verify.code == 0, "\(verify)")
  }

  /// A change sent again after its answer was lost counts as a duplicate,
  /// not as applied again; a push's events and transaction count with the
  /// other writes' (before: a page's message and a `POST /api/remove`
  /// gave `msglog_events_appended_total 1`).
  @Test func metricsCountWhatAPushDid() throws {
    let server = Sandbox()
    let served = try ServedLog.running(server)
    defer { _ = served.stop() }
    let first = served.request("POST", "/api/append", #"{"text":"first"}"#)
    #expect(first.status == 200, "\(first)")
    let log = try RawSync.logID(of: served)
    let (replica, secret) = (UUID().uuidString.lowercased(), RawSync.newSecret())
    let change = RawSync.append(1, text: "from a replica", seen: 1)
    for _ in 0..<3 {
      let reply = try RawSync.push(served, log: log, replica: replica, secret: secret, changes: [change])
      #expect(reply.status == 200 && reply.body.contains(#""applied""#), "\(reply)")
    }
    let id = served.request("GET", "/api/items").body.firstMatch(of: #/"id":"([0-9a-f-]{36})"/#)?.1
    let removed = served.request("POST", "/api/remove", #"{"id":"\#(id ?? "")"}"#)
    #expect(removed.status == 200, "\(removed)")

    #expect(Self.metric(served, #"msglog_sync_changes_total{result="applied"}"#) == 1)
    #expect(Self.metric(served, #"msglog_sync_changes_total{result="duplicate"}"#) == 2)
    #expect(Self.metric(served, "msglog_events_appended_total") == 3)
    #expect(Self.metric(served, "msglog_commit_batch_size_count") == 5, "three writes and two resends")
    #expect(Self.metric(served, "msglog_commit_duration_seconds_count") == 5)
  }
}
