import Foundation
import Msglog

#if canImport(Glibc)
  import Glibc
#endif

/// msglog on PostgreSQL beside bare PostgreSQL, in one run on one server:
///
/// - writers: `msglog serve` over HTTP (keep-alive) and one `EventLog`
///   shared by threads, with 1, 4 and 16 clients, against pgbench's bare
///   `INSERT` and its gapless counter with as many connections, with what
///   the server's sessions do while 16 clients write;
/// - a whole `msglog append` process against `psql -c INSERT` and against
///   one pgbench transaction on a connection of its own (`-C`);
/// - `import` into a new database (a bulk load: `COPY` on PostgreSQL, `MDB_APPEND`
///   on LMDB), `list`, `replay --at` and `verify` against LMDB on the same data;
/// - a follower on a hot standby, from the primary's commit to its output.
struct PostgresBench {
  /// A superuser URL to the server's `postgres` database.
  var url: String
  var msglog: String
  var directory: String
  var runs: Int
  var items: Int
  /// A hot standby of the same server (its superuser URL), for the follower figures.
  var standby: String?
  var seconds: Double = 4
  var clientCounts = [1, 4, 16]
  /// Only the writers' figures (and the nodes behind nginx): the quick run.
  var writersOnly = false
  /// The clients of the nodes figure, and how many nodes it compares with one.
  static let nodeClients = 48
  static let nodeCount = 3

  var server: String { String(url.dropLast("/postgres".count)) }

  struct Writers {
    var clients: Int
    var serve: Double
    var shared: Double
    var insert: Double
    var gapless: Double
  }

  struct Results {
    var writers: [Writers] = []
    var insertAndNotify16 = 0.0
    /// Session states sampled while 16 HTTP clients append.
    var activity: [(state: String, count: Int)] = []
    var append: Duration = .zero
    var psql: Duration = .zero
    /// One pgbench INSERT on a connection of its own (TCP, SCRAM).
    var connectEach: Duration = .zero
    var listLMDB = ProcessRun(time: .zero, peakKiB: 0, peakAnonKiB: 0, status: 0)
    var listPostgres = ProcessRun(time: .zero, peakKiB: 0, peakAnonKiB: 0, status: 0)
    var listSmallPostgres = ProcessRun(time: .zero, peakKiB: 0, peakAnonKiB: 0, status: 0)
    var replayAt: [(percent: Int, lmdb: Duration, postgres: Duration)] = []
    var importLMDB: Duration = .zero
    var importPostgres: Duration = .zero
    var verifyEvents = 100_000
    var verifyLMDB: Duration = .zero
    var verifyPostgres: Duration = .zero
    var repairPostgres: Duration = .zero
    var standbyFollow: FollowBench.Results?
    /// Appends/s from `nodeClients` HTTP clients through nginx, to one
    /// `serve` and to `nodeCount` of them on the same database.
    var nodes: (one: Double, many: Double)?
  }

  func psql(_ sql: String, database: String = "postgres") throws {
    let r = try runProcess("/usr/bin/psql", ["-qAt", "-v", "ON_ERROR_STOP=1", server + "/" + database, "-c", sql])
    guard r.status == 0 else { throw BenchError("psql failed: \(sql)") }
  }

  func freshDatabase(_ name: String) throws -> String {
    try psql("DROP DATABASE IF EXISTS \(name) WITH (FORCE)")
    try psql("CREATE DATABASE \(name)")
    return server + "/" + name
  }

  static let databases = [
    "msglog_bench_pgbench", "msglog_bench_serve", "msglog_bench_shared", "msglog_bench_single",
    "msglog_bench_list", "msglog_bench_verify", "msglog_bench_follow",
  ]

  /// Runs of each import, alternating (a minute or so each on a loaded machine).
  static let importRuns = 2

  func run() throws -> Results {
    var results = Results()
    try? FileManager.default.removeItem(atPath: directory)
    try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
    defer { for name in Self.databases { try? psql("DROP DATABASE IF EXISTS \(name) WITH (FORCE)") } }
    try writers(&results)
    results.nodes = try nodes()
    if writersOnly { return results }
    try processes(&results)
    try sameData(&results)
    try verify(&results)
    if let standby { results.standbyFollow = try follow(standby: standby) }
    return results
  }

  // MARK: - Writers

  private func writers(_ results: inout Results) throws {
    let baseline = try freshDatabase("msglog_bench_pgbench")
    try psql(Pgbench.setup, database: "msglog_bench_pgbench")
    guard let pgbench = Pgbench(url: baseline, directory: directory, seconds: Int(seconds)) else {
      throw BenchError("pgbench is not installed")
    }
    let text = String(repeating: "m", count: 60)
    for clients in clientCounts {
      // msglog serve: every client its own keep-alive connection.
      let serveDB = try freshDatabase("msglog_bench_serve")
      try EventLog(serveDB).append("seed")
      let served = try ServerProcess(msglog: msglog, db: serveDB)
      let sampler =
        clients == clientCounts.last
        ? try ActivitySampler(server: server, database: "msglog_bench_serve", directory: directory) : nil
      let serve = try operationsPerSecond(clients: clients, seconds: seconds) { _ in
        let connection = try HTTPConnection(port: served.port)
        return { try connection.post("/api/append", #"{"text":"\#(text)","sender":"bench"}"#) }
      }
      if let sampler { results.activity = sampler.stop() }
      served.stop()
      // One EventLog shared by the clients' threads, in this process.
      let sharedDB = try freshDatabase("msglog_bench_shared")
      let log = try EventLog(sharedDB)
      try log.append("seed")
      let shared = try operationsPerSecond(clients: clients, seconds: seconds) { _ in
        { _ = try log.append(text, sender: "bench") }
      }
      let insert = try pgbench.tps(.insert, clients: clients)
      let gapless = try pgbench.tps(.gaplessCounter, clients: clients)
      FileHandle.standardError.write(
        Data(
          String(
            format:
              "bench: postgres: %d clients: serve %.0f/s, shared EventLog %.0f/s, INSERT %.0f/s, gapless %.0f/s\n",
            clients, serve, shared, insert, gapless
          ).utf8))
      results.writers.append(Writers(clients: clients, serve: serve, shared: shared, insert: insert, gapless: gapless))
    }
    results.insertAndNotify16 = try pgbench.tps(.insertAndNotify, clients: clientCounts.last!)
    results.connectEach = .seconds(1 / (try pgbench.tps(.insert, clients: 1, connectEach: true)))
  }

  // MARK: - Nodes behind nginx

  /// `nodeClients` keep-alive clients appending through nginx, to one
  /// `serve` and then to `nodeCount` of them on one database (a fresh one
  /// each time): what more nodes give on this machine.
  private func nodes() throws -> (one: Double, many: Double) {
    let text = String(repeating: "m", count: 60)
    var rates: [Double] = []
    for count in [1, Self.nodeCount] {
      let db = try freshDatabase("msglog_bench_serve")
      try EventLog(db).append("seed")
      var served: [ServerProcess] = []
      defer { for node in served { node.stop() } }
      for _ in 0..<count { served.append(try ServerProcess(msglog: msglog, db: db)) }
      let front = try NginxFront(nodes: served.map(\.port), directory: directory + "/nginx-\(count)")
      defer { front.stop() }
      let port = front.port
      let rate = try operationsPerSecond(clients: Self.nodeClients, seconds: seconds) { _ in
        let connection = try HTTPConnection(port: port)
        return { try connection.post("/api/append", #"{"text":"\#(text)","sender":"bench"}"#) }
      }
      FileHandle.standardError.write(
        Data(
          String(
            format: "bench: postgres: %d node(s) behind nginx, %d clients: %.0f/s\n", count, Self.nodeClients, rate
          ).utf8))
      rates.append(rate)
    }
    return (rates[0], rates[1])
  }

  // MARK: - Whole processes

  private func processes(_ results: inout Results) throws {
    let single = try freshDatabase("msglog_bench_single")
    _ = try runProcess(msglog, ["--db", single, "append", "warm-up"])
    try psql("CREATE TABLE rows (id bigserial PRIMARY KEY, payload bytea NOT NULL)", database: "msglog_bench_single")
    // Medians of 31 alternating runs: a process is a few milliseconds, and
    // this machine's drift would otherwise decide the ratio.
    (results.append, results.psql) = try alternatingProcesses(
      31, (msglog, ["--db", single, "append", "hello from the benchmark"]),
      (
        "/usr/bin/psql",
        [single, "-qc", "INSERT INTO rows (payload) VALUES (convert_to('hello from the benchmark', 'UTF8'))"]
      ))
  }

  // MARK: - The same data on both stores

  private func sameData(_ results: inout Results) throws {
    // A stream of `items` items, and a small stream whose events are spread through it.
    var lines: [String] = []
    lines.reserveCapacity(items + items / 1000 + 1)
    for n in 0..<items {
      lines.append(#"{"op":"append","stream":"big","text":"message \#(n) of the big stream, sixty bytes or so"}"#)
      if n % 1000 == 0 {
        lines.append(#"{"op":"append","stream":"small","text":"small \#(n)"}"#)
      }
    }
    let input = lines.joined(separator: "\n")
    let lmdb = directory + "/same.lmdb"
    var postgres = ""
    // Best of two, alternating, each into a new database (the last stays for what follows).
    results.importLMDB = .seconds(1_000_000)
    results.importPostgres = .seconds(1_000_000)
    for _ in 0..<Self.importRuns {
      try? FileManager.default.removeItem(atPath: lmdb)
      postgres = try freshDatabase("msglog_bench_list")
      let importLMDB = try runProcess(msglog, ["--db", lmdb, "import"], stdin: input)
      let importPostgres = try runProcess(msglog, ["--db", postgres, "import"], stdin: input)
      guard importLMDB.status == 0, importPostgres.status == 0 else { throw BenchError("import failed") }
      results.importLMDB = min(results.importLMDB, importLMDB.time)
      results.importPostgres = min(results.importPostgres, importPostgres.time)
    }
    results.listLMDB = try bestProcess(runs, msglog, ["--db", lmdb, "--stream", "big", "list"], memory: true)
    results.listPostgres = try bestProcess(runs, msglog, ["--db", postgres, "--stream", "big", "list"], memory: true)
    results.listSmallPostgres = try bestProcess(
      runs, msglog, ["--db", postgres, "--stream", "small", "list"], memory: true)
    let head = lines.count
    for percent in [10, 50, 90, 100] {
      let seq = String(head * percent / 100)
      let l = try bestProcess(runs, msglog, ["--db", lmdb, "--stream", "small", "replay", "--at", seq])
      let p = try bestProcess(runs, msglog, ["--db", postgres, "--stream", "small", "replay", "--at", seq])
      results.replayAt.append((percent, l.time, p.time))
    }
    try? psql("DROP DATABASE IF EXISTS msglog_bench_list WITH (FORCE)")
  }

  /// `verify` of a log of 100,000 events (inserts and moves in two
  /// streams), and `verify --repair` on PostgreSQL.
  private func verify(_ results: inout Results) throws {
    var lines: [String] = []
    var counts = [0, 0]
    var seed: UInt64 = 7
    func next(_ bound: Int) -> Int {
      seed = seed &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
      return Int((seed >> 33) % UInt64(bound))
    }
    for n in 0..<results.verifyEvents {
      let s = n % 5 == 0 ? 1 : 0
      let count = counts[s]
      if count < 2 || next(10) < 6 {
        lines.append(#"{"op":"insert","stream":"s\#(s)","index":\#(next(count + 1)),"text":"message \#(n)"}"#)
        counts[s] += 1
      } else {
        let from = next(count)
        lines.append(#"{"op":"move","stream":"s\#(s)","from":\#(from),"to":\#((from + 1 + next(count - 1)) % count)}"#)
      }
    }
    let input = lines.joined(separator: "\n")
    let lmdb = directory + "/verify.lmdb"
    let postgres = try freshDatabase("msglog_bench_verify")
    guard try runProcess(msglog, ["--db", lmdb, "import"], stdin: input).status == 0,
      try runProcess(msglog, ["--db", postgres, "import"], stdin: input).status == 0
    else { throw BenchError("import for verify failed") }
    results.verifyLMDB = try bestProcess(runs, msglog, ["--db", lmdb, "verify"]).time
    results.verifyPostgres = try bestProcess(max(runs / 2, 2), msglog, ["--db", postgres, "verify"]).time
    results.repairPostgres = try bestProcess(2, msglog, ["--db", postgres, "verify", "--repair"]).time
  }

  // MARK: - A follower on a standby

  private func follow(standby: String) throws -> FollowBench.Results {
    let primary = try freshDatabase("msglog_bench_follow")
    try EventLog(primary).append("seed")
    let replica = String(standby.dropLast("/postgres".count)) + "/msglog_bench_follow"
    // The standby has the database once it has replayed its creation.
    let deadline = ContinuousClock.now + .seconds(30)
    while (try? EventLog(replica).headSeq()) != 1 {
      guard ContinuousClock.now < deadline else { throw BenchError("the standby never replayed the seed") }
      usleep(20_000)
    }
    return try FollowBench(directory: directory + "/follow", msglog: msglog, writeTo: primary, followOn: replica)
      .run()
  }
}
