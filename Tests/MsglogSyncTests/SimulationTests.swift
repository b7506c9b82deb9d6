import Msglog
import MsglogTestSupport
import Testing

/// Three replicas and an online writer doing random writes and syncs
/// against one remote, through a remote that drops requests and answers
/// (after the remote committed) at random — in process, so many seeds run
/// in seconds. The real-process variant (HTTP through a fault-injecting
/// proxy, kill -9, restarts) is `FaultSimulationTests`.
@Suite struct SimulationTests {
  /// A remote that fails at random: a request dropped before the remote
  /// sees it, or its answer lost after the remote did it.
  final class FaultyRemote: SyncRemote {
    let inner: LogRemote
    var random: SeededGenerator
    var faults = 0
    /// How often a call fails, in percent.
    let rate: UInt64

    init(_ inner: LogRemote, seed: UInt64, rate: UInt64) {
      self.inner = inner
      random = SeededGenerator(seed: seed)
      self.rate = rate
    }

    struct Dropped: Error {}

    var shown: String { inner.shown }

    private func maybe<R>(_ call: () throws -> R) throws -> R {
      let roll = random.next() % 100
      if roll < rate / 2 {
        faults += 1
        throw MsglogError.connectionLost(location: shown, reason: "the request was dropped")
      }
      let result = try call()
      if roll < rate {
        faults += 1
        throw MsglogError.connectionLost(location: shown, reason: "the answer was lost")
      }
      return result
    }

    func hello() throws -> RemoteHello { try maybe { try inner.hello() } }
    func push(_ request: PushRequest) throws -> PushAnswer { try maybe { try inner.push(request) } }
    func pull(_ request: PullRequest) throws -> RecordPage { try maybe { try inner.pull(request) } }
    func bases(of log: ItemID) throws -> [ImportedBase] { try maybe { try inner.bases(of: log) } }
    func waitForEvents(after seq: UInt64, seconds: Double, stop: [FollowStop]) throws -> Bool {
      false
    }
  }

  /// One writer's random command on `log`'s stream; refusals are fine (the
  /// random choice may name what is gone).
  static func randomWrite(on log: EventLog, stream: StreamName, random: inout SeededGenerator, tag: String) {
    let items = (try? log.items(of: stream).items) ?? []
    let count = items.count
    do {
      switch random.next() % 10 {
      case 0, 1:
        try log.append("\(tag) \(random.next() % 1000)", to: stream)
      case 2, 3:
        try log.insert("\(tag) i\(random.next() % 1000)", at: Int(random.next() % UInt64(count + 1)), into: stream)
      case 4 where count > 1, 5 where count > 1:
        try log.move(from: Int(random.next() % UInt64(count)), to: Int(random.next() % UInt64(count)), in: stream)
      case 6 where count > 0:
        try log.remove(id: items[Int(random.next() % UInt64(count))].id, from: stream)
      case 7 where count > 0:
        try log.edit(
          .id(items[Int(random.next() % UInt64(count))].id), text: "\(tag) e\(random.next() % 1000)", in: stream)
      case 8:
        try log.undo(in: stream)
      default:
        try log.append("\(tag) \(random.next() % 1000)", to: stream)
      }
    } catch let error as MsglogError {
      // Refusals the random writer can run into; anything else is a bug.
      #expect(error.category == .refused || error.category == .notFound, "\(tag): \(error)")
    } catch {
      Issue.record("\(tag): \(error)")
    }
  }

  func run(seed: UInt64, rounds: Int, faultRate: UInt64) throws {
    let dir = TemporaryDirectory()
    let server = try EventLog(dir.path + "/server.lmdb")
    let streams = [StreamName("board"), StreamName("chat")]
    for stream in streams { try server.append("first of \(stream.text)", to: stream) }
    var random = SeededGenerator(seed: seed)
    var replicas: [(log: EventLog, remote: FaultyRemote)] = []
    for r in 0..<3 {
      let path = dir.path + "/replica\(r).lmdb"
      _ = try EventLog.clone(from: LogRemote(server), remoteLocation: server.location, into: path)
      replicas.append(
        (try EventLog(path), FaultyRemote(LogRemote(server), seed: seed &* 31 &+ UInt64(r), rate: faultRate)))
    }
    for _ in 0..<rounds {
      let who = Int(random.next() % 5)
      let stream = streams[Int(random.next() % 2)]
      if who == 3 {
        Self.randomWrite(on: server, stream: stream, random: &random, tag: "online")
      } else if who == 4 {
        let (log, remote) = replicas[Int(random.next() % 3)]
        try syncChecked(log, remote, server: server, streams: streams)
      } else {
        Self.randomWrite(on: replicas[who].log, stream: stream, random: &random, tag: "r\(who)")
      }
    }
    // Everyone syncs until clean (a fault may need a few tries).
    for _ in 0..<2 {
      for (log, remote) in replicas {
        var tries = 0
        while true {
          do {
            _ = try log.sync(with: remote)
            break
          } catch let error as MsglogError where error.category == .unavailable {
            tries += 1
            #expect(tries < 100, "seed \(seed): a replica never got through: \(error)")
            if tries >= 100 { break }
          }
        }
      }
    }
    var serverEvents: [Event] = []
    try server.export { serverEvents.append($0) }
    var refused = 0
    for (log, _) in replicas { refused += try log.replicaStatus().refused.count }
    print(
      "simulation seed \(seed): \(serverEvents.count) events, \(serverEvents.filter { $0.origin != nil }.count) from replicas, "
        + "\(refused) changes refused, \(replicas.map(\.remote.faults).reduce(0, +)) faults injected")
    #expect(try server.verify().isClean, "seed \(seed): the server does not verify")
    for (r, (log, _)) in replicas.enumerated() {
      var events: [Event] = []
      try log.export { events.append($0) }
      #expect(events == serverEvents, "seed \(seed): replica \(r)'s export differs from the server's")
      #expect(try log.pendingChanges().isEmpty, "seed \(seed): replica \(r) still has pending changes")
      let report = try log.verify()
      #expect(report.isClean, "seed \(seed): replica \(r) does not verify: \(report.problems)")
      // Every change done exactly once: applied (one event with its origin) or not appended.
      let state = try log.replicaState()!
      let origins = serverEvents.compactMap(\.origin).filter { $0.replica == state.replica }.map(\.change)
      #expect(
        origins == origins.sorted() && Set(origins).count == origins.count, "seed \(seed): a change applied twice")
      #expect(origins.allSatisfy { $0 < state.nextChange }, "seed \(seed): an event of a change never made")
      // Done 1…N; every outcome kept from the first change of the replica's
      // last push, before it only the applied ones (what it settled and
      // appended nothing is forgotten).
      let outcomes = try server.syncOutcomes(of: state.replica)
      let progress = try server.syncProgress(of: state.replica)
      #expect(progress?.done ?? 0 == state.nextChange - 1, "seed \(seed): replica \(r)'s changes are not done 1…N")
      let keptFrom = progress?.keptFrom ?? 1
      #expect(
        outcomes.map(\.0).filter { $0 >= keptFrom } == Array(keptFrom..<state.nextChange),
        "seed \(seed): replica \(r)'s outcomes from change \(keptFrom) are not all kept")
      let applied = outcomes.compactMap { change, outcome -> UInt64? in
        if case .applied = outcome { return change }
        return nil
      }
      #expect(applied == origins, "seed \(seed): applied outcomes and events' origins differ")
    }
  }

  /// A sync that, when it gets through and nobody but this replica wrote a
  /// stream since its last pull, leaves the remote's list of that stream as
  /// the replica showed it.
  func syncChecked(_ log: EventLog, _ remote: FaultyRemote, server: EventLog, streams: [StreamName]) throws {
    let head = try log.headSeq()
    let replica = try log.replicaState()!.replica
    var shown: [StreamName: [ItemID]] = [:]
    for stream in streams {
      let others = try server.events(from: head + 1, stream: stream).contains { $0.origin?.replica != replica }
      if !others { shown[stream] = try log.items(of: stream).items.map(\.id) }
    }
    do {
      _ = try log.sync(with: remote)
    } catch let error as MsglogError where error.category == .unavailable {
      return
    }
    for (stream, ids) in shown {
      #expect(try server.items(of: stream).items.map(\.id) == ids, "the remote moved what nobody else touched")
    }
  }

  @Test(arguments: 1...12) func manySeeds(seed: UInt64) throws {
    try run(seed: seed, rounds: 160, faultRate: 20)
  }
}
