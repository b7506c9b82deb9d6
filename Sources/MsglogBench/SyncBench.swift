import Foundation

/// What sync costs (docs/PERFORMANCE.md, "Sync"), each against a baseline
/// measured in the same run, every figure a whole process as a user runs it:
///
/// - a `msglog sync` of 1,000 pending changes through `msglog serve`,
///   against the same 1,000 appends POSTed to the same server one after
///   another on one kept connection (what an online client would send);
/// - a `clone` of a log of `cloneEvents` events through `serve`, against
///   `msglog export | msglog import` of the same log;
/// - a replica's `list` with 1,000 pending changes, against the same list
///   with none (the local view must not replay the log per command).
struct SyncBench {
  let directory: String
  let msglog: String
  let cloneEvents: Int

  struct Results {
    var sync: Duration
    var appends: Duration
    var clone: Duration
    var exportImport: Duration
    var listPending: Duration
    var listClean: Duration
    var listJSONPending: Duration
    var listJSONClean: Duration
    /// The same replica once its 1,000 changes synced: the same items, none pending.
    var listSynced: Duration
  }

  func run() throws -> Results {
    try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
    var results = Results(
      sync: .zero, appends: .zero, clone: .zero, exportImport: .zero, listPending: .zero, listClean: .zero,
      listJSONPending: .zero, listJSONClean: .zero, listSynced: .zero)

    // A sync of 1,000 pending changes, and 1,000 online appends.
    let server = directory + "/server.lmdb"
    try must(runProcess(msglog, ["--db", server, "append", "first"]))
    let serve = try ServerProcess(msglog: msglog, db: server)
    defer { serve.stop() }
    let url = "http://127.0.0.1:\(serve.port)"
    let lines = (1...1000).map { "card \($0)" }.joined(separator: "\n") + "\n"
    var syncs: [Duration] = []
    var online: [Duration] = []
    for round in 0..<3 {
      let replica = directory + "/replica-\(round).lmdb"
      try must(runProcess(msglog, ["--db", replica, "clone", url]))
      try must(runProcess(msglog, ["--db", replica, "append", "--lines"], stdin: lines))
      let sync = try runProcess(msglog, ["--db", replica, "sync"])
      try must(sync)
      syncs.append(sync.time)
      let connection = try HTTPConnection(port: serve.port)
      let start = ContinuousClock.now
      for i in 1...1000 { try connection.post("/api/append", #"{"text":"online \#(i)"}"#) }
      online.append(ContinuousClock.now - start)
    }
    results.sync = syncs.min()!
    results.appends = online.min()!

    // A replica's list with 1,000 pending changes, and without.
    let listed = directory + "/listed.lmdb"
    try must(runProcess(msglog, ["--db", listed, "clone", url]))
    results.listClean = try bestProcess(21, msglog, ["--db", listed, "list"]).time
    results.listJSONClean = try bestProcess(21, msglog, ["--db", listed, "list", "--json"]).time
    try must(runProcess(msglog, ["--db", listed, "append", "--lines"], stdin: lines))
    results.listPending = try bestProcess(21, msglog, ["--db", listed, "list"]).time
    results.listJSONPending = try bestProcess(21, msglog, ["--db", listed, "list", "--json"]).time
    try must(runProcess(msglog, ["--db", listed, "sync"]))
    results.listSynced = try bestProcess(21, msglog, ["--db", listed, "list"]).time

    // A clone of a big log, and export | import of it.
    let big = directory + "/big.lmdb"
    let bigLines = (1...cloneEvents).map { #"{"op":"append","text":"item \#($0)"}"# }.joined(separator: "\n") + "\n"
    try must(runProcess(msglog, ["--db", big, "import"], stdin: bigLines))
    let bigServe = try ServerProcess(msglog: msglog, db: big)
    defer { bigServe.stop() }
    var clones: [Duration] = []
    var copies: [Duration] = []
    for round in 0..<2 {
      let clone = try runProcess(msglog, ["--db", directory + "/clone-\(round).lmdb", "clone", "http://127.0.0.1:\(bigServe.port)"])
      try must(clone)
      clones.append(clone.time)
      let exported = directory + "/export-\(round).jsonl"
      let start = ContinuousClock.now
      try must(runProcess(msglog, ["--db", big, "export"], output: exported))
      try must(runProcess(msglog, ["--db", directory + "/copy-\(round).lmdb", "import", exported]))
      copies.append(ContinuousClock.now - start)
    }
    results.clone = clones.min()!
    results.exportImport = copies.min()!
    return results
  }

  private func must(_ run: ProcessRun) throws {
    guard run.status == 0 else { throw BenchError("a step of the sync benchmark exited \(run.status)") }
  }
}
