import Foundation
import MsglogTestSupport
import Testing

#if canImport(Glibc)
  import Glibc
#endif

/// The seeded simulation of docs/SYNC.md's guarantees with real processes:
/// a `msglog serve` (LMDB or PostgreSQL) behind a fault-injecting proxy
/// that drops requests, drops answers after the server did them and cuts
/// answers halfway; three replicas cloned through it doing random inserts,
/// moves, removes, edits and undos offline and syncing, a sync now and
/// then killed with -9 midway; an online writer at the server; the server
/// itself killed with -9 and restarted. At the end every replica syncs
/// until clean, and then:
///
/// - each replica's export is byte for byte the server's, and verify
///   passes everywhere (the server's also checks each replica's progress
///   against the events' origins);
/// - no change of any replica is at the server twice, and every change is
///   either there once, refused (the replica's status says so), or
///   changed nothing.
///
/// A few seeds run in the suite; MSGLOG_STRESS=1 runs many, longer.
@Suite(.serialized) struct SyncFaultSimulationTests {
  static let stress = ProcessInfo.processInfo.environment["MSGLOG_STRESS"] == "1"
  static let seeds: [UInt64] = stress ? Array(1...24) : [1, 2]
  static let steps = stress ? 120 : 36

  @Test(arguments: [Store.lmdb, .postgres], seeds)
  func everyChangeOnceEveryReplicaExact(store: Store, seed: UInt64) throws {
    var random = SeededGenerator(seed: seed &* 7919 &+ (store == .lmdb ? 0 : 1))
    let server = Sandbox(store)
    for text in ["a", "b", "c", "d"] { _ = server.run(["--stream", "board", "append", text]) }
    _ = server.run(["--stream", "chat", "append", "hi"])
    var served = try ServedLog.running(server)
    let port = served.port
    defer { _ = served.stop() }
    let proxy = FaultProxy(target: port, seed: seed, mix: [.pass: 5, .dropRequest: 1, .dropAnswer: 1, .cutAnswer: 1])
    defer { proxy.stop() }

    proxy.always(.pass)
    let replicas = (0..<3).map { _ in Sandbox() }
    for replica in replicas {
      let clone = replica.run(["clone", proxy.url])
      try #require(clone.code == 0, "\(clone)")
    }
    proxy.always(nil)

    var made = [Int](repeating: 0, count: replicas.count)
    for _ in 0..<Self.steps {
      let roll = Int.random(in: 0..<100, using: &random)
      switch roll {
      case 0..<55:
        let i = Int.random(in: 0..<replicas.count, using: &random)
        if let args = Self.randomWrite(on: replicas[i], &random), replicas[i].run(args).code == 0 { made[i] += 1 }
      case 55..<75:
        let i = Int.random(in: 0..<replicas.count, using: &random)
        _ = replicas[i].run(["sync"])
      case 75..<85:
        // A sync killed midway.
        let i = Int.random(in: 0..<replicas.count, using: &random)
        let sync = replicas[i].start(["sync"])
        // Deliberate: killed at a seeded random point (the scenario).
        usleep(UInt32.random(in: 0...120_000, using: &random))
        kill(sync.process.processIdentifier, SIGKILL)
        _ = sync.finish()
      case 85..<95:
        // Someone online at the server.
        if let args = Self.randomWrite(on: server, &random) { _ = server.run(args) }
      default:
        kill(served.pid, SIGKILL)
        _ = served.stop()
        served = try ServedLog.running(server, listen: "127.0.0.1:\(port)")
      }
    }

    // The network is back: every replica syncs until clean, twice round
    // so that each also pulls what the others pushed.
    proxy.always(.pass)
    for _ in 0..<2 {
      for replica in replicas {
        var last = replica.run(["sync"])
        for _ in 0..<3 where last.code != 0 { last = replica.run(["sync"]) }
        #expect(last.code == 0, "\(last)")
      }
    }
    let export = server.export()
    #expect(server.run(["verify"]).code == 0, "\(server.run(["verify"]))")
    var atServer: [String: [Int: Int]] = [:]
    for line in server.run(["log", "--all", "--json"]).stdout.split(separator: "\n") {
      guard let event = try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any],
        let origin = event["origin"] as? [String: Any], let replica = origin["replica"] as? String,
        let change = origin["change"] as? Int
      else { continue }
      atServer[replica, default: [:]][change, default: 0] += 1
    }
    for (i, replica) in replicas.enumerated() {
      #expect(replica.export() == export, "replica \(i) differs from the server")
      let verify = replica.run(["verify"])
      #expect(verify.code == 0, "\(verify)")
      let status = try JSONSerialization.jsonObject(with: Data(replica.run(["status", "--json"]).stdout.utf8))
        as? [String: Any]
      #expect(status?["pending"] as? Int == 0)
      let refused = (status?["refused"] as? [[String: Any]] ?? []).compactMap { $0["pending"] as? Int }
      let id = try Self.replicaID(of: replica)
      let applied = atServer[id] ?? [:]
      #expect(applied.values.allSatisfy { $0 == 1 }, "a change of replica \(i) is at the server twice: \(applied)")
      #expect(Set(applied.keys).isDisjoint(with: refused), "replica \(i): a change both applied and refused")
      // Change numbers are 1…N for the N changes made (a reset would renumber; none is made here).
      #expect(applied.keys.allSatisfy { $0 >= 1 && $0 <= made[i] }, "replica \(i): \(applied.keys.sorted()) of \(made[i])")
      #expect(applied.count + refused.count <= made[i])
    }
    #expect(proxy.counts[.dropAnswer, default: 0] + proxy.counts[.cutAnswer, default: 0] > 0, "no fault happened")
  }

  /// A write for `sandbox`'s board as it is now (its local view, on a
  /// replica); nil when the board is empty and the draw needs an item.
  static func randomWrite(on sandbox: Sandbox, _ random: inout SeededGenerator) -> [String]? {
    let listed = sandbox.run(["--stream", "board", "list", "--json"]).stdout
    let items = (try? JSONSerialization.jsonObject(with: Data(listed.utf8)) as? [String: Any])?["items"]
      as? [[String: Any]] ?? []
    let ids = items.compactMap { $0["id"] as? String }
    let board = ["--stream", "board"]
    let roll = Int.random(in: 0..<6, using: &random)
    if roll == 0 || ids.isEmpty { return board + ["append", "card \(UInt32.random(in: 0...99_999, using: &random))"] }
    let n = ids.count
    switch roll {
    case 1: return board + ["insert", String(Int.random(in: 0...n, using: &random)), "ins"]
    case 2: return board + ["move", String(Int.random(in: 0..<n, using: &random)), String(Int.random(in: 0..<n, using: &random))]
    case 3: return board + ["remove", ids.randomElement(using: &random)!]
    case 4: return board + ["edit", ids.randomElement(using: &random)!, "edited \(UInt8.random(in: 0...99, using: &random))"]
    default: return board + ["undo"]
    }
  }

  /// The replica's id (`status --verbose --json`), which its changes carry as their origin.
  static func replicaID(of replica: Sandbox) throws -> String {
    let status = replica.run(["status", "--json", "--verbose"]).stdout
    let object = try JSONSerialization.jsonObject(with: Data(status.utf8)) as? [String: Any]
    return try #require(object?["replica"] as? String, "\(status)")
  }
}
