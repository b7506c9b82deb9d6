import Foundation
import Msglog
import Synchronization

#if canImport(Glibc)
  import Glibc
#endif

/// msglog on PostgreSQL beside bare PostgreSQL, in the same run on the same
/// server: appends per second with 1, 4 and 16 clients against pgbench
/// inserting rows of the same size with the same durability and as many
/// connections; one `msglog append` process against one `psql -c INSERT`
/// process; and `list` and `replay --at` against LMDB on the same data.
struct PostgresBench {
  /// A superuser URL to the server's `postgres` database.
  var url: String
  var msglog: String
  var directory: String
  var runs: Int
  var items: Int
  var seconds: Double = 4

  var server: String { String(url.dropLast("/postgres".count)) }

  struct Results {
    var throughput: [(clients: Int, msglog: Double, insert: Double)] = []
    var append: Duration = .zero
    var psql: Duration = .zero
    var listLMDB = ProcessRun(time: .zero, peakKiB: 0, peakAnonKiB: 0, status: 0)
    var listPostgres = ProcessRun(time: .zero, peakKiB: 0, peakAnonKiB: 0, status: 0)
    var listSmallPostgres = ProcessRun(time: .zero, peakKiB: 0, peakAnonKiB: 0, status: 0)
    var replayAt: [(percent: Int, lmdb: Duration, postgres: Duration)] = []
    var importLMDB: Duration = .zero
    var importPostgres: Duration = .zero
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

  func run() throws -> Results {
    var results = Results()
    try? FileManager.default.removeItem(atPath: directory)
    try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
    let text = String(repeating: "m", count: 60)

    // Throughput: N clients, each its own connection, appending for a while.
    let pgbench = (try? FileManager.default.contentsOfDirectory(atPath: "/usr/lib/postgresql"))?.sorted().last
      .map { "/usr/lib/postgresql/\($0)/bin/pgbench" }
    let baseline = try freshDatabase("msglog_bench_insert")
    // A row as large as msglog's event record for the same text (about 140 bytes).
    try psql("CREATE TABLE rows (id bigserial PRIMARY KEY, payload bytea NOT NULL)", database: "msglog_bench_insert")
    let script = directory + "/insert.sql"
    try "INSERT INTO rows (payload) VALUES (convert_to(repeat('m', 140), 'UTF8'));\n".write(
      toFile: script, atomically: true, encoding: .utf8)
    for clients in [1, 4, 16] {
      let appendsDB = try freshDatabase("msglog_bench_appends")
      try EventLog(appendsDB).append("seed")
      let count = Mutex(0)
      let deadline = ContinuousClock.now + .milliseconds(Int(seconds * 1000))
      let start = ContinuousClock.now
      DispatchQueue.concurrentPerform(iterations: clients) { client in
        guard let log = try? EventLog(appendsDB) else { return }
        var mine = 0
        while ContinuousClock.now < deadline {
          if (try? log.append(text, to: StreamName("c\(client % 4)"))) != nil { mine += 1 }
        }
        count.withLock { $0 += mine }
      }
      let elapsed = (ContinuousClock.now - start).seconds
      let msglogRate = Double(count.withLock { $0 }) / elapsed
      var insertRate = 0.0
      if let pgbench {
        let out = directory + "/pgbench.out"
        let r = try runProcess(
          "/bin/sh",
          [
            "-c",
            "\(pgbench) -n -c \(clients) -j \(clients) -T \(Int(seconds)) -f \(script) '\(baseline)' > \(out) 2>&1",
          ])
        let report = (try? String(contentsOfFile: out, encoding: .utf8)) ?? ""
        if r.status == 0, let line = report.split(separator: "\n").first(where: { $0.hasPrefix("tps = ") }) {
          insertRate = Double(line.dropFirst(6).prefix { $0 != " " }) ?? 0
        }
      }
      FileHandle.standardError.write(
        Data("bench: postgres: \(clients) clients: msglog \(Int(msglogRate))/s, insert \(Int(insertRate))/s\n".utf8))
      results.throughput.append((clients, msglogRate, insertRate))
    }

    // One process against one process.
    let single = try freshDatabase("msglog_bench_single")
    _ = try runProcess(msglog, ["--db", single, "append", "warm-up"])
    results.append = try bestProcess(runs, msglog, ["--db", single, "append", "hello from the benchmark"]).time
    try psql("CREATE TABLE rows (id bigserial PRIMARY KEY, payload bytea NOT NULL)", database: "msglog_bench_single")
    results.psql = try bestProcess(
      runs, "/usr/bin/psql",
      [single, "-qc", "INSERT INTO rows (payload) VALUES (convert_to('hello from the benchmark', 'UTF8'))"]
    ).time

    // The same log on both stores: a stream of `items` items, and a small
    // stream whose events are spread through it.
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
    let postgres = try freshDatabase("msglog_bench_list")
    let importLMDB = try runProcess(msglog, ["--db", lmdb, "import"], stdin: input)
    let importPostgres = try runProcess(msglog, ["--db", postgres, "import"], stdin: input)
    guard importLMDB.status == 0, importPostgres.status == 0 else { throw BenchError("import failed") }
    results.importLMDB = importLMDB.time
    results.importPostgres = importPostgres.time
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
    for name in ["msglog_bench_insert", "msglog_bench_appends", "msglog_bench_single", "msglog_bench_list"] {
      try? psql("DROP DATABASE IF EXISTS \(name) WITH (FORCE)")
    }
    return results
  }
}
