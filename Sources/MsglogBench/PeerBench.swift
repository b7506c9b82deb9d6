import Foundation

/// msglog beside its peers on the same machine, in the same run: one durable
/// append against one sqlite3 insert, and bulk import against LMDB's own
/// mdb_load writing the same number of records of the same size.
struct PeerBench {
  var directory: String
  var msglog: String
  var runs: Int
  var records: Int
  var recordSize: Int

  struct Results {
    var append: Duration
    var sqlite: Duration
    var version: Duration
    var sqliteStart: Duration
    var importTime: Duration
    var mdbLoad: Duration
  }

  func run() throws -> Results {
    try? FileManager.default.removeItem(atPath: directory)
    try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
    let db = directory + "/append.lmdb"
    _ = try runProcess(msglog, ["--db", db, "append", "warm-up"])
    let sqliteDB = directory + "/events.sqlite"
    _ = try runProcess(
      "/usr/bin/sqlite3",
      [
        sqliteDB,
        "PRAGMA journal_mode=WAL; PRAGMA synchronous=FULL; CREATE TABLE events (seq INTEGER PRIMARY KEY, stream TEXT, version INTEGER, time TEXT, op TEXT, id TEXT, body TEXT);",
      ])
    // Medians of 31 alternating runs: start-up is a few milliseconds, and
    // this machine's drift would otherwise decide the ratio.
    let (append, sqlite) = try alternatingProcesses(
      31, (msglog, ["--db", db, "append", "hello from the benchmark"]),
      (
        "/usr/bin/sqlite3",
        [
          sqliteDB,
          "PRAGMA synchronous=FULL; INSERT INTO events (stream, version, time, op, id, body) VALUES ('main', 1, '2026-11-29T10:00:00.000Z', 'insert', '3f2a1b4c-0000-4000-8000-00000000abcd', 'hello from the benchmark');",
        ]
      ))
    let (version, sqliteStart) = try alternatingProcesses(
      31, (msglog, ["--version"]), ("/usr/bin/sqlite3", [":memory:", "select 1"]))

    // Bulk: `records` appends through `msglog import`, and mdb_load of as many
    // records of the same size (the size of an event record holding that text).
    let text = String(repeating: "x", count: max(1, recordSize - 70))
    let lines = String(repeating: #"{"op":"append","text":"\#(text)"}"# + "\n", count: records)
    let importDB = directory + "/import.lmdb"
    let importRun = try runProcess(msglog, ["--db", importDB, "import"], stdin: lines)
    guard importRun.status == 0 else { throw BenchError("import failed") }
    var dump = "VERSION=3\nformat=bytevalue\ntype=btree\nmapsize=\(1 << 34)\nHEADER=END\n"
    let value = " " + String(repeating: "78", count: recordSize) + "\n"
    dump.reserveCapacity(records * (value.count + 20))
    for i in 1...records { dump += " " + String(format: "%016llx", UInt64(i)) + "\n" + value }
    dump += "DATA=END\n"
    let loadDB = directory + "/load.lmdb"
    try FileManager.default.createDirectory(atPath: loadDB, withIntermediateDirectories: true)
    let load = try runProcess("/usr/bin/mdb_load", ["-f", "/dev/stdin", loadDB], stdin: dump)
    guard load.status == 0 else { throw BenchError("mdb_load failed") }
    return Results(append: append, sqlite: sqlite, version: version, sqliteStart: sqliteStart, importTime: importRun.time, mdbLoad: load.time)
  }
}
