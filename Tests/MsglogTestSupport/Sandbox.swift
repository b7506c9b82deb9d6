import Foundation
import Testing

#if canImport(Glibc)
  import Glibc
#endif

/// What one run of the binary did.
public struct Run: CustomStringConvertible, Sendable {
  public var code: Int32
  public var stdout: String
  public var stderr: String

  public init(code: Int32, stdout: String, stderr: String) {
    self.code = code
    self.stdout = stdout
    self.stderr = stderr
  }

  public var description: String { "exit \(code)\nstdout: \(stdout)\nstderr: \(stderr)" }
  public var lines: [String] {
    stdout.split(separator: "\n", omittingEmptySubsequences: false).dropLast().map(String.init)
  }
}

/// Runs the real `msglog` binary against a database in its own temporary directory.
///
/// stdout and stderr go to files rather than pipes, so a child that prints
/// more than a pipe holds can never deadlock the test.
public final class Sandbox: @unchecked Sendable {  // immutable after init
  public let dir: String
  public let store: Store
  /// The database: a directory for LMDB, a URL for PostgreSQL.
  public let db: String
  /// The PostgreSQL database's name (dropped with the sandbox).
  let databaseName: String?

  public init(_ store: Store = .lmdb) {
    self.store = store
    dir = NSTemporaryDirectory() + "msglog-cli-" + UUID().uuidString
    try! FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
    switch store {
    case .lmdb:
      db = dir + "/msglog.lmdb"
      databaseName = nil
    case .postgres:
      let database = PostgresCluster.createDatabase()
      db = database.url
      databaseName = database.name
    }
  }

  deinit {
    try? FileManager.default.removeItem(atPath: dir)
    if let databaseName { PostgresCluster.dropDatabase(databaseName) }
  }

  /// The database as messages name it: a URL loses its password.
  public var shown: String {
    guard store == .postgres, let at = db.lastIndex(of: "@"), let scheme = db.firstRange(of: "://") else { return db }
    let user = db[scheme.upperBound..<at].prefix { $0 != ":" }
    return String(db[..<scheme.upperBound]) + user + db[at...]
  }

  /// Whether there is no log yet: no LMDB directory, or no msglog tables.
  public var isEmpty: Bool {
    switch store {
    case .lmdb: return !FileManager.default.fileExists(atPath: db)
    case .postgres: return PostgresCluster.digest(of: databaseName!) == "no msglog tables"
    }
  }

  /// What the database holds, to check that a refused command changed
  /// nothing: data.mdb's bytes, or a digest of every msglog table.
  public func contents() -> String {
    switch store {
    case .lmdb:
      let data = FileManager.default.contents(atPath: db + "/data.mdb") ?? Data()
      return data.base64EncodedString()
    case .postgres:
      return PostgresCluster.digest(of: databaseName!)
    }
  }

  public static let binary: String = {
    if let path = ProcessInfo.processInfo.environment["MSGLOG_BIN"] { return path }
    // The test bundle sits in the build products directory beside the binary.
    // /proc/self/exe is absolute, whatever the working directory is now.
    let bundle =
      (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")) ?? CommandLine.arguments[0]
    var url = URL(fileURLWithPath: bundle).deletingLastPathComponent()
    while url.path != "/" {
      let candidate = url.appendingPathComponent("msglog").path
      if FileManager.default.isExecutableFile(atPath: candidate), !candidate.hasSuffix(".xctest") {
        return candidate
      }
      url.deleteLastPathComponent()
    }
    fatalError("cannot find the msglog binary beside \(CommandLine.arguments[0]); set MSGLOG_BIN")
  }()

  /// Runs `msglog ARGS` with `MSGLOG_DB` set to this sandbox's database.
  @discardableResult
  public func run(
    _ args: [String], stdin: Data = Data(), environment: [String: String] = [:], useDefaultDB: Bool = true,
    asNobody: Bool = false, runner: String? = nil
  ) -> Run {
    let process = start(
      args, stdin: stdin, environment: environment, useDefaultDB: useDefaultDB, asNobody: asNobody, runner: runner)
    process.process.waitUntilExit()
    return process.finish()
  }

  @discardableResult
  public func run(_ args: String..., stdin: String = "") -> Run {
    run(args, stdin: Data(stdin.utf8))
  }

  public struct Child {
    public let process: Process
    let outPath: String
    let errPath: String

    public func finish() -> Run {
      process.waitUntilExit()
      let out = (try? String(contentsOfFile: outPath, encoding: .utf8)) ?? ""
      let err = (try? String(contentsOfFile: errPath, encoding: .utf8)) ?? ""
      try? FileManager.default.removeItem(atPath: outPath)
      try? FileManager.default.removeItem(atPath: errPath)
      return Run(code: process.terminationStatus, stdout: out, stderr: err)
    }
  }

  /// Starts `msglog ARGS` without waiting (for concurrency tests).
  public func start(
    _ args: [String], stdin: Data = Data(), environment: [String: String] = [:], useDefaultDB: Bool = true,
    stdout: FileHandle? = nil, asNobody: Bool = false, runner: String? = nil
  ) -> Child {
    let base = dir + "/run-" + UUID().uuidString
    let inPath = base + ".in", outPath = base + ".out", errPath = base + ".err"
    FileManager.default.createFile(atPath: inPath, contents: stdin)
    FileManager.default.createFile(atPath: outPath, contents: nil)
    FileManager.default.createFile(atPath: errPath, contents: nil)
    let process = Process()
    if let runner {
      process.executableURL = URL(fileURLWithPath: runner)
      process.arguments = args
    } else if asNobody {
      // Another user, who may read the database but not write it (needs root to switch).
      process.executableURL = URL(fileURLWithPath: "/usr/bin/setpriv")
      process.arguments = ["--reuid=65534", "--regid=65534", "--clear-groups", "--", Sandbox.binary] + args
    } else {
      process.executableURL = URL(fileURLWithPath: Sandbox.binary)
      process.arguments = args
    }
    process.currentDirectoryURL = URL(fileURLWithPath: dir)
    var env = ["PATH": "/usr/bin:/bin"]
    if useDefaultDB { env["MSGLOG_DB"] = db }
    env.merge(environment) { $1 }
    process.environment = env
    process.standardInput = FileHandle(forReadingAtPath: inPath)
    process.standardOutput = stdout ?? FileHandle(forWritingAtPath: outPath)
    process.standardError = FileHandle(forWritingAtPath: errPath)
    try! process.run()
    return Child(process: process, outPath: outPath, errPath: errPath)
  }

  /// The whole log as `export` prints it.
  public func export() -> String {
    let r = run(["export"])
    #expect(r.code == 0, "\(r)")
    return r.stdout
  }

  /// Appends one message and returns its id.
  @discardableResult
  public func append(_ text: String, sender: String? = nil, stream: String = "main") -> String {
    var args = ["append", "--stream", stream]
    if let sender { args += ["--sender", sender] }
    let r = run(args + ["--", text])
    #expect(r.code == 0, "\(r)")
    return r.stdout.trimmingCharacters(in: .newlines)
  }
}

/// Replaces RFC 3339 times, which differ on every run, with a placeholder.
public func maskingTimes(_ text: String) -> String {
  text.replacingOccurrences(
    of: #"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z"#, with: "TIME", options: .regularExpression)
}

public func fixture(_ name: String) -> String {
  URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
    .deletingLastPathComponent().appendingPathComponent("Fixtures/" + name).path
}

/// The repository's root directory.
public let repositoryRoot: String = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
  .deletingLastPathComponent().deletingLastPathComponent().path

/// Runs /usr/bin/python3 (which has Debian's python3-lmdb) with `arguments`.
public func python(_ arguments: [String], stdin: Data = Data()) -> Run {
  let p = Process()
  p.executableURL = URL(fileURLWithPath: "/usr/bin/python3")
  p.arguments = arguments
  let input = Pipe()
  let out = Pipe()
  let err = Pipe()
  p.standardInput = input
  p.standardOutput = out
  p.standardError = err
  try! p.run()
  input.fileHandleForWriting.write(stdin)
  try? input.fileHandleForWriting.close()
  // Read both pipes while the child runs: a full pipe would deadlock it.
  nonisolated(unsafe) var stderr = Data()
  let reader = Thread { stderr = err.fileHandleForReading.readDataToEndOfFile() }
  reader.start()
  let stdout = out.fileHandleForReading.readDataToEndOfFile()
  p.waitUntilExit()
  while !reader.isFinished { usleep(1000) }
  return Run(
    code: p.terminationStatus, stdout: String(decoding: stdout, as: UTF8.self),
    stderr: String(decoding: stderr, as: UTF8.self))
}

/// Runs a shell command line; returns its exit status.
@discardableResult
public func shell(_ command: String) -> Int32 {
  let p = Process()
  p.executableURL = URL(fileURLWithPath: "/bin/sh")
  p.arguments = ["-c", command]
  try! p.run()
  p.waitUntilExit()
  return p.terminationStatus
}

/// Mounts a tmpfs of `size` at `path`; false when not permitted (not root).
public func mountTmpfs(at path: String, size: String) -> Bool {
  shell("mount -t tmpfs -o size=\(size) tmpfs \(path) 2>/dev/null") == 0
}

public func unmount(_ path: String) { shell("umount \(path)") }

/// Flips one bit of every copy of `marker` in the database file.
public func flipInDataFile(_ s: Sandbox, marker: String) throws {
  let path = s.db + "/data.mdb"
  var data = try Data(contentsOf: URL(fileURLWithPath: path))
  var from = data.startIndex
  var found = 0
  while let range = data.range(of: Data(marker.utf8), in: from..<data.endIndex) {
    data[range.lowerBound + 7] ^= 0x20
    from = range.upperBound
    found += 1
  }
  #expect(found > 0, "\(marker) is not in data.mdb")
  try data.write(to: URL(fileURLWithPath: path))
}

/// Makes the sandbox's database readable (not writable) by other users.
public func makeReadableByOthers(_ s: Sandbox, db: String? = nil) throws {
  let db = db ?? s.db
  #expect(chmod(s.dir, 0o755) == 0 && chmod(db, 0o755) == 0)
  for file in try FileManager.default.contentsOfDirectory(atPath: db) { #expect(chmod(db + "/" + file, 0o644) == 0) }
}
