import Foundation
import Msglog

/// msglog-bench: figures for docs/PERFORMANCE.md, each as a ratio
/// against a baseline measured in the same run (see scripts/bench).
///
///     msglog-bench --trace ../shared/traces/automerge-paper.json.gz [--trace …] [--runs N]
let arguments = Array(CommandLine.arguments.dropFirst())
var traces: [String] = []
var runs = 3
var scale = 0
var bigItems = 0
var peers = false
var follow = false
var serve = false
var sync = false
var syncCloneEvents = 1_000_000
var serveCost = false
var serveCostRounds = 5
var users: [String] = []
var postgres: String? = nil
var postgresStandby: String? = nil
var postgresItems = 1_000_000
var postgresWritersOnly = false
var msglog = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent().appendingPathComponent("msglog")
  .path
var i = 0
while i < arguments.count {
  switch arguments[i] {
  case "--trace": traces.append(arguments[i + 1]); i += 2
  case "--runs": runs = Int(arguments[i + 1])!; i += 2
  case "--scale": scale = Int(arguments[i + 1])!; i += 2
  case "--big": bigItems = Int(arguments[i + 1])!; i += 2
  case "--peers": peers = true; i += 1
  case "--follow": follow = true; i += 1
  case "--serve": serve = true; serveCost = true; i += 1
  case "--serve-cost": serveCost = true; i += 1
  case "--serve-cost-rounds": serveCostRounds = Int(arguments[i + 1])!; i += 2
  case "--sync": sync = true; i += 1
  case "--sync-clone-events": syncCloneEvents = Int(arguments[i + 1])!; i += 2
  case "--users": users.append(arguments[i + 1]); i += 2
  case "--postgres": postgres = arguments[i + 1]; i += 2
  case "--postgres-standby": postgresStandby = arguments[i + 1]; i += 2
  case "--postgres-items": postgresItems = Int(arguments[i + 1])!; i += 2
  case "--postgres-writers-only": postgresWritersOnly = true; i += 1
  case "--msglog": msglog = arguments[i + 1]; i += 2
  default:
    FileHandle.standardError.write(Data("msglog-bench: unknown argument \(arguments[i])\n".utf8))
    exit(64)
  }
}

let scratch = NSTemporaryDirectory() + "msglog-bench-" + UUID().uuidString
try FileManager.default.createDirectory(atPath: scratch, withIntermediateDirectories: true)
defer { try? FileManager.default.removeItem(atPath: scratch) }

var table = Table()
for path in traces {
  let trace = try Trace.load(path: path, stream: "doc")
  let events = trace.requests.count
  FileHandle.standardError.write(Data("bench: \(trace.name): \(events) events\n".utf8))
  let results = try TraceBench(trace: trace, directory: scratch + "/" + trace.name, runs: runs).run()
  let replayRate = Double(events) / results.replay.seconds
  table.add("\(trace.name): import \(events) events", results.importTime.pretty, "—", "—", "")
  table.add(
    "\(trace.name): full replay vs Array baseline", results.replay.pretty, results.arrayBaseline.pretty,
    ratio(results.arrayBaseline.seconds, results.replay.seconds) + " faster", "≥ 50×")
  table.add(
    "\(trace.name): full replay rate (in process, best of \(runs))",
    String(format: "%.1f M events/s", replayRate / 1e6), "—",
    "—", "≥ 10 M/s")
  table.add(
    "\(trace.name): full replay vs raw LMDB cursor scan", results.replay.pretty, results.rawScan.pretty,
    ratio(results.replay.seconds, results.rawScan.seconds) + " slower", "≤ 3×")  // issue 39 item 4
  table.add(
    "\(trace.name): replay --at midpoint vs full replay", results.replayMid.pretty, results.replay.pretty,
    ratio(results.replayMid.seconds, results.replay.seconds), "")
}
if scale > 0 {
  let big = bigItems > 0 ? bigItems : scale / 10
  FileHandle.standardError.write(Data("bench: scale: \(scale) events, \(big) live items in the big stream\n".utf8))
  let r = try ScaleBench(events: scale, bigItems: big, directory: scratch + "/scale", msglog: msglog, runs: runs).run()
  let label = "scale \(scale / 1_000_000)M events"
  table.add("\(label): generate the log (library, batches of 100k)", r.importTime.pretty, "—", "—", "")
  let fastest = r.replayAtSmall.map(\.1).min()!, slowest = r.replayAtSmall.map(\.1).max()!
  for (percent, time) in r.replayAtSmall {
    table.add(
      "\(label): replay --at \(percent)% of head, small stream", time.pretty, fastest.pretty,
      ratio(time.seconds, fastest.seconds), "")
  }
  table.add(
    "\(label): replay --at, slowest ÷ fastest", slowest.pretty, fastest.pretty, ratio(slowest.seconds, fastest.seconds),
    "≤ 2")
  table.add(
    "\(label): replay --at head ÷ list, big stream", r.replayAtBigHead.time.pretty, r.listBig.time.pretty,
    ratio(r.replayAtBigHead.time.seconds, r.listBig.time.seconds), "≤ 2")
  for (command, big, small) in r.commands {
    table.add(
      "\(label): \(command) process, big ÷ small stream", big.pretty, small.pretty, ratio(big.seconds, small.seconds),
      "≤ 2")
  }
  func mib(_ kib: Int) -> String { String(format: "%.1f MiB", Double(kib) / 1024) }
  table.add(
    "\(label): peak heap of list, big ÷ small stream", mib(r.listBig.peakAnonKiB), mib(r.listSmall.peakAnonKiB),
    ratio(Double(r.listBig.peakAnonKiB), Double(r.listSmall.peakAnonKiB)), "flat")
  table.add(
    "\(label): full replay of the big stream: time, peak heap", r.fullReplayBig.time.pretty,
    mib(r.fullReplayBig.peakAnonKiB), "—", "report")
}
if peers {
  let r = try PeerBench(
    directory: scratch + "/peers", msglog: msglog, runs: max(runs, 5), records: 200_000, recordSize: 80
  ).run()
  table.add(
    "peers: one durable append process vs sqlite3 insert (medians of 31)", r.append.pretty, r.sqlite.pretty,
    ratio(r.append.seconds, r.sqlite.seconds), "≤ 1")
  table.add(
    "peers: msglog --version vs sqlite3 :memory: 'select 1' (medians of 31)", r.version.pretty, r.sqliteStart.pretty,
    ratio(r.version.seconds, r.sqliteStart.seconds), "≤ 1")
  table.add(
    "peers: import 200k events vs mdb_load of 200k 80-byte records", r.importTime.pretty, r.mdbLoad.pretty,
    ratio(r.mdbLoad.seconds, r.importTime.seconds) + " throughput", "≥ 0.5×")
}
if follow {
  FileHandle.standardError.write(Data("bench: follow: 3 follower processes, 300 commits\n".utf8))
  let r = try FollowBench(directory: scratch + "/follow", msglog: msglog).run()
  table.add(
    "follow: commit to a follower's output, p50 (\(r.samples) samples)", r.p50.pretty, "50 ms",
    ratio(0.050, r.p50.seconds) + " under", "≤ 50 ms")
  table.add(
    "follow: commit to a follower's output, p99", r.p99.pretty, "50 ms", ratio(0.050, r.p99.seconds) + " under",
    "≤ 50 ms")
  table.add("follow: the writer's durable commit, p50 (for scale)", r.commitP50.pretty, "—", "—", "report")
}
for path in users {
  let trace = try Trace.load(path: path, stream: "doc")
  let root = URL(fileURLWithPath: msglog).deletingLastPathComponent().deletingLastPathComponent()
    .deletingLastPathComponent().path
  let userBench = UserBench(trace: trace, directory: scratch + "/users-" + trace.name, msglog: msglog, root: root)
  FileHandle.standardError.write(
    Data(
      ("bench: users: \(trace.name), whole processes, output to a file, best of \(userBench.runs) "
        + "(\(userBench.importRuns) for import, \(userBench.pythonListRuns) for Python's list)\n").utf8))
  let r = try userBench.run()
  // Whole processes, stdout to a file, best of N alternating with the baseline.
  let label = "\(trace.name) (process > file, best of \(userBench.runs))"
  let pythonList = "\(trace.name) (process > file, best of \(userBench.pythonListRuns))"
  let imports = "\(trace.name) (process > file, best of \(userBench.importRuns))"
  table.add(
    "\(imports): import M events/s", String(format: "%.2f M events/s", Double(r.events) / r.importTime.seconds / 1e6),
    "—", "—", "≥ 1 M/s")
  table.add(
    "\(imports): import \(r.events) events vs Python lmdb writer", r.importTime.pretty, r.baselineImport.pretty,
    ratio(r.importTime.seconds, r.baselineImport.seconds), "≤ 1×")
  table.add(
    "\(label): full text replay rate", String(format: "%.1f M events/s", Double(r.events) / r.replay.seconds / 1e6),
    "—", "—", "≥ 5 M/s")
  table.add(
    "\(label): text list vs full text replay", r.list.pretty, r.replay.pretty, ratio(r.list.seconds, r.replay.seconds),
    "≤ 0.5×")
  table.add(
    "\(label): --json list vs text list", r.jsonList.pretty, r.list.pretty, ratio(r.jsonList.seconds, r.list.seconds),
    "≤ 1.3×")
  table.add(
    "\(pythonList): --json replay vs Python list script", r.jsonReplay.pretty, r.pythonReplay.pretty,
    ratio(r.jsonReplay.seconds, r.pythonReplay.seconds), "≤ 0.03×")
}
if serve {
  FileHandle.standardError.write(Data("bench: serve: HTTP appends (1, 16 clients), SSE fan-out to 200 clients\n".utf8))
  let r = try ServeBench(directory: scratch + "/serve", msglog: msglog).run()
  for (clients, http, inProcess) in r.throughput {
    table.add(
      "serve: appends/s over HTTP (keep-alive), \(clients) client\(clients == 1 ? "" : "s"), vs EventLog in process",
      String(format: "%.0f/s", http), String(format: "%.0f/s", inProcess), ratio(http, inProcess) + " throughput",
      "report")
  }
  table.add(
    "serve: commit to SSE arrival, 200 clients, p50 (\(r.samples) samples)", r.fanoutP50.pretty, "50 ms",
    ratio(0.050, r.fanoutP50.seconds) + " under", "report")
  table.add(
    "serve: commit to SSE arrival, 200 clients, p99", r.fanoutP99.pretty, "50 ms",
    ratio(0.050, r.fanoutP99.seconds) + " under", "report")
}
if serveCost {
  FileHandle.standardError.write(Data("bench: serve: the request log and metrics, 16 clients, on and off\n".utf8))
  let (operated, bare) = try ServeBench(directory: scratch + "/serve-cost", msglog: msglog).operationsCost(
    clients: 16, rounds: serveCostRounds)
  table.add(
    "serve: appends/s, 16 clients, request log + metrics (scraped 1/s) vs --log-format none --no-metrics "
      + "(median of \(serveCostRounds) alternating)",
    String(format: "%.0f/s", operated), String(format: "%.0f/s", bare), ratio(operated, bare) + " throughput",
    "≥ 0.95×")
}
if let postgres {
  FileHandle.standardError.write(Data("bench: postgres: \(postgresItems) items\n".utf8))
  let r = try PostgresBench(
    url: postgres, msglog: msglog, directory: scratch + "/postgres", runs: max(runs, 5), items: postgresItems,
    standby: postgresStandby, writersOnly: postgresWritersOnly
  ).run()
  func rate(_ value: Double) -> String { String(format: "%.0f/s", value) }
  for w in r.writers {
    let clients = "\(w.clients) client\(w.clients == 1 ? "" : "s")"
    table.add(
      "postgres: serve appends/s over HTTP, \(clients), vs pgbench INSERT", rate(w.serve), rate(w.insert),
      ratio(w.serve, w.insert) + " throughput", w.clients == 16 ? "≥ 0.5×" : "report")
    table.add(
      "postgres: serve appends/s over HTTP, \(clients), vs pgbench gapless counter", rate(w.serve),
      rate(w.gapless), ratio(w.serve, w.gapless) + " throughput", w.clients == 16 ? "≥ 2×" : "report")
    table.add(
      "postgres: one EventLog shared by \(clients) (threads), vs pgbench INSERT", rate(w.shared), rate(w.insert),
      ratio(w.shared, w.insert) + " throughput", "report")
  }
  if let one = r.writers.first(where: { $0.clients == 1 }) {
    table.add(
      "postgres: serve, one client's append over HTTP, vs one pgbench INSERT", Duration.seconds(1 / one.serve).pretty,
      Duration.seconds(1 / one.insert).pretty, ratio(one.insert, one.serve), "report (was 1.39 ms)")
  }
  if let last = r.writers.last {
    table.add(
      "postgres: pgbench INSERT + pg_notify, \(last.clients) clients, vs INSERT (for scale)", rate(r.insertAndNotify16),
      rate(last.insert), ratio(r.insertAndNotify16, last.insert) + " throughput", "report")
  }
  let sampled = r.activity.reduce(0) { $0 + $1.count }
  table.add(
    "postgres: sessions while 16 clients append (pg_stat_activity, every 20 ms)",
    r.activity.prefix(4).map { "\($0.state) \($0.count)" }.joined(separator: ", "), "\(sampled) samples", "—",
    "report")
  if let nodes = r.nodes {
    table.add(
      "postgres: \(PostgresBench.nodeCount) serve nodes behind nginx vs 1 node behind nginx, \(PostgresBench.nodeClients) clients",
      rate(nodes.many), rate(nodes.one), ratio(nodes.many, nodes.one) + " throughput", "report")
  }
  if !postgresWritersOnly {
    table.add(
      "postgres: one append process vs one psql INSERT process (medians of 31)", r.append.pretty, r.psql.pretty,
      ratio(r.append.seconds, r.psql.seconds), "≤ 1")
    table.add(
      "postgres: one append process vs a pgbench INSERT on a new connection (-C)", r.append.pretty,
      r.connectEach.pretty, ratio(r.append.seconds, r.connectEach.seconds), "report")
    table.add(
      "postgres: import \(postgresItems / 1000)k events into a new database, vs LMDB (best of \(PostgresBench.importRuns))",
      r.importPostgres.pretty, r.importLMDB.pretty, ratio(r.importPostgres.seconds, r.importLMDB.seconds), "≤ 2")
    table.add(
      "postgres: list of a \(postgresItems / 1000)k-item stream, vs LMDB", r.listPostgres.time.pretty,
      r.listLMDB.time.pretty, ratio(r.listPostgres.time.seconds, r.listLMDB.time.seconds), "≤ 3")
    func mib(_ kib: Int) -> String { String(format: "%.1f MiB", Double(kib) / 1024) }
    table.add(
      "postgres: peak heap of list, big ÷ small stream", mib(r.listPostgres.peakAnonKiB),
      mib(r.listSmallPostgres.peakAnonKiB),
      ratio(Double(r.listPostgres.peakAnonKiB), Double(max(r.listSmallPostgres.peakAnonKiB, 1))), "flat")
    let fastest = r.replayAt.map(\.postgres).min()!, slowest = r.replayAt.map(\.postgres).max()!
    for (percent, lmdbTime, postgresTime) in r.replayAt {
      table.add(
        "postgres: replay --at \(percent)% of head, small stream, vs LMDB", postgresTime.pretty, lmdbTime.pretty,
        ratio(postgresTime.seconds, lmdbTime.seconds), "")
    }
    table.add(
      "postgres: replay --at, slowest ÷ fastest", slowest.pretty, fastest.pretty,
      ratio(slowest.seconds, fastest.seconds),
      "≤ 2")
    table.add(
      "postgres: verify of \(r.verifyEvents / 1000)k events, vs LMDB", r.verifyPostgres.pretty, r.verifyLMDB.pretty,
      ratio(r.verifyPostgres.seconds, r.verifyLMDB.seconds), "≤ 10×")
    table.add(
      "postgres: verify --repair of \(r.verifyEvents / 1000)k events, vs verify", r.repairPostgres.pretty,
      r.verifyPostgres.pretty, ratio(r.repairPostgres.seconds, r.verifyPostgres.seconds), "report")
    if let f = r.standbyFollow {
      table.add(
        "postgres: commit on the primary to a standby follower's output, p50 (\(f.samples) samples)", f.p50.pretty,
        "250 ms", ratio(0.250, f.p50.seconds) + " under", "≤ 250 ms")
      table.add(
        "postgres: commit on the primary to a standby follower's output, p99", f.p99.pretty, "250 ms",
        ratio(0.250, f.p99.seconds) + " under", "≤ 250 ms")
    }
    // LMDB's serve beside it: the same group commit, one fsync per batch.
    FileHandle.standardError.write(Data("bench: serve on LMDB: 1 and 16 clients\n".utf8))
    let lmdbServe = try ServeBench(directory: scratch + "/serve-lmdb", msglog: msglog).throughput(clientCounts: [1, 16])
    if let one = lmdbServe.first, let many = lmdbServe.last {
      table.add(
        "LMDB: serve appends/s over HTTP, 16 clients vs 1", rate(many.1), rate(one.1), ratio(many.1, one.1), "≥ 4×")
    }
  }
}
if sync {
  FileHandle.standardError.write(
    Data("bench: sync: 1,000 pending changes, a clone of \(syncCloneEvents) events\n".utf8))
  let r = try SyncBench(directory: scratch + "/sync", msglog: msglog, cloneEvents: syncCloneEvents).run()
  table.add(
    "sync: 1,000 pending changes pushed and pulled, vs 1,000 appends POSTed to serve", r.sync.pretty, r.appends.pretty,
    ratio(r.sync.seconds, r.appends.seconds), "report")
  table.add(
    // Issue 39's target is for a log of a million events or more.
    "sync: clone of \(syncCloneEvents) events through serve, vs export \\| import", r.clone.pretty,
    r.exportImport.pretty, ratio(r.clone.seconds, r.exportImport.seconds),
    syncCloneEvents >= 1_000_000 ? "≤ 1.2×" : "report")
  table.add(
    "sync: a replica's list with 1,000 pending changes, vs none", r.listPending.pretty, r.listClean.pretty,
    ratio(r.listPending.seconds, r.listClean.seconds), "≤ 1.5×")
  table.add(
    "sync: a replica's list --json with 1,000 pending changes, vs none", r.listJSONPending.pretty,
    r.listJSONClean.pretty, ratio(r.listJSONPending.seconds, r.listJSONClean.seconds), "≤ 1.5×")
  table.add(
    "sync: a replica's list with 1,000 pending changes, vs the same items synced", r.listPending.pretty,
    r.listSynced.pretty, ratio(r.listPending.seconds, r.listSynced.seconds), "report")
}
print(table.render())
