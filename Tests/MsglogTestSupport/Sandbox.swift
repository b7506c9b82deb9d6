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
  public let databaseName: String?

  public init(_ store: Store = .lmdb) {
    self.store = store
    dir = TemporaryDirectories.make(prefix: "msglog-cli-")
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
    TemporaryDirectories.remove(dir)
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

  /// The test target does not depend on the executable (see Package.swift),
  /// so `swift test` alone does not rebuild it: refuse to test an old one.
  /// (msglog-serve, beside it, is checked against its own sources too.)
  static func checkNotStale(_ binary: String, elsewhere: [String]) {
    let manager = FileManager.default
    guard let built = (try? manager.attributesOfItem(atPath: binary))?[.modificationDate] as? Date,
      let files = manager.enumerator(atPath: repositoryRoot + "/Sources")
    else { return }
    for case let file as String in files
    where !elsewhere.contains(where: { file == $0 || file.hasPrefix($0 + "/") }) {
      let changed = (try? manager.attributesOfItem(atPath: repositoryRoot + "/Sources/" + file))?[.modificationDate]
      if let changed = changed as? Date, changed > built {
        let product = binary.hasSuffix("/msglog-serve") ? "msglog-serve" : "msglog"
        fatalError(
          "\(binary) is older than Sources/\(file): run 'swift build --product \(product)' (scripts/test does)")
      }
    }
  }

  public static let binary: String = {
    if let path = ProcessInfo.processInfo.environment["MSGLOG_BIN"] { return path }
    // The test bundle sits in the build products directory beside the binary.
    // /proc/self/exe is absolute, whatever the working directory is now.
    let bundle =
      (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")) ?? CommandLine.arguments[0]
    let manager = FileManager.default
    var url = URL(fileURLWithPath: bundle).deletingLastPathComponent()
    while url.path != "/" {
      let candidate = url.appendingPathComponent("msglog").path
      if FileManager.default.isExecutableFile(atPath: candidate), !candidate.hasSuffix(".xctest") {
        // Not part of msglog: the server, its program, its library shim, the benchmark and its TCP client.
        checkNotStale(
          candidate, elsewhere: ["msglog-serve", "MsglogServer", "CMicroHTTPD", "MsglogBench", "MsglogLoopback"])
        let serve = url.appendingPathComponent("msglog-serve").path
        if manager.isExecutableFile(atPath: serve) {
          checkNotStale(serve, elsewhere: ["msglog", "MsglogBench", "MsglogLoopback"])
        }
        return candidate
      }
      url.deleteLastPathComponent()
    }
    fatalError(
      "cannot find the msglog binary beside \(CommandLine.arguments[0]): run 'swift build --product msglog' "
        + "first (scripts/test does), or set MSGLOG_BIN")
  }()

  /// Runs `msglog ARGS` with `MSGLOG_DB` set to this sandbox's database.
  @discardableResult
  public func run(
    _ args: [String], stdin: Data = Data(), environment: [String: String] = [:], useDefaultDB: Bool = true,
    asNobody: Bool = false, runner: String? = nil
  ) -> Run {
    start(args, stdin: stdin, environment: environment, useDefaultDB: useDefaultDB, asNobody: asNobody, runner: runner)
      .finish()
  }

  @discardableResult
  public func run(_ args: String..., stdin: String = "") -> Run {
    run(args, stdin: Data(stdin.utf8))
  }

  public struct Child {
    public let process: ChildProcess
    public let outPath: String
    public let errPath: String

    /// Waits until the child has printed `text` on stdout (it is a file:
    /// read as it grows), or has ended, or `seconds` have passed; whether
    /// it printed it. A readiness signal, never a fixed sleep.
    @discardableResult
    public func waitForOutput(_ text: String, seconds: Double = 60) -> Bool {
      let deadline = Date().addingTimeInterval(seconds)
      while true {
        let printed = (try? String(contentsOfFile: outPath, encoding: .utf8)) ?? ""
        if printed.contains(text) { return true }
        if !process.isRunning || Date() >= deadline { return false }
        usleep(5_000)
      }
    }

    /// `finish()`, for a child that ends by itself (a follower with
    /// `--limit`): one still running after `seconds` is ended with SIGTERM
    /// first, so that a test whose writes went missing fails and says what
    /// the child printed, instead of waiting for ever.
    public func finish(endingAfter seconds: Double) -> Run {
      let deadline = Date().addingTimeInterval(seconds)
      while process.isRunning, Date() < deadline { usleep(10_000) }
      if process.isRunning { kill(process.processIdentifier, SIGTERM) }
      return finish()
    }

    public func finish() -> Run {
      process.waitUntilExit()
      let out = (try? String(contentsOfFile: outPath, encoding: .utf8)) ?? ""
      let err = (try? String(contentsOfFile: errPath, encoding: .utf8)) ?? ""
      try? FileManager.default.removeItem(atPath: outPath)
      try? FileManager.default.removeItem(atPath: errPath)
      // A child killed by a signal reads as the shell says it: 128 + the
      // signal, so a trap (SIGILL, 4) is never mistaken for an exit code.
      let signaled = process.terminationReason == .uncaughtSignal
      return Run(code: (signaled ? 128 : 0) + process.terminationStatus, stdout: out, stderr: err)
    }
  }

  /// Starts `msglog ARGS` without waiting (for concurrency tests).
  ///
  /// stdin, stdout and stderr are files (or `stdout`), so a child that prints
  /// more than a pipe holds can never deadlock the test.
  public func start(
    _ args: [String], stdin: Data = Data(), environment: [String: String] = [:], useDefaultDB: Bool = true,
    stdout: FileHandle? = nil, asNobody: Bool = false, runner: String? = nil
  ) -> Child {
    let base = dir + "/run-" + UUID().uuidString
    let inPath = base + ".in", outPath = base + ".out", errPath = base + ".err"
    _ = FileManager.default.createFile(atPath: inPath, contents: stdin)
    _ = FileManager.default.createFile(atPath: outPath, contents: nil)
    _ = FileManager.default.createFile(atPath: errPath, contents: nil)
    let executable: String
    var arguments = args
    if let runner {
      executable = runner
    } else if asNobody {
      // Another user, who may read the database but not write it (needs root to switch).
      executable = "/usr/bin/setpriv"
      arguments = ["--reuid=65534", "--regid=65534", "--clear-groups", "--", Sandbox.binary] + args
    } else {
      executable = Sandbox.binary
    }
    var env = ["PATH": "/usr/bin:/bin"]
    if useDefaultDB { env["MSGLOG_DB"] = db }
    env.merge(environment) { $1 }
    let process = ChildProcess(
      executable: executable, arguments: arguments, environment: env, directory: dir, stdin: inPath,
      stdout: stdout.map { .descriptor($0.fileDescriptor) } ?? .file(outPath), stderr: errPath)
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
  runProgram("/usr/bin/python3", arguments, stdin: stdin)
}

/// Runs the Swift toolchain (`swift build`, `swift package`, `swiftc`, …)
/// with `TMPDIR` set to `scratch`, a directory the caller removes: SwiftPM
/// leaves its lock files, and the driver its `TemporaryDirectory.*`
/// folders, in the temporary directory, a few for every build, and a full
/// test run left some thirty in `/tmp`.
public func runToolchain(_ arguments: [String], scratch: String) -> Run {
  runProgram("/usr/bin/env", ["TMPDIR=" + scratch] + arguments)
}

/// Runs `executable` with `arguments`, reading both its pipes while it runs.
public func runProgram(_ executable: String, _ arguments: [String], stdin: Data = Data()) -> Run {
  let p = Process()
  p.executableURL = URL(fileURLWithPath: executable)
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
///
/// Spawned and reaped by hand (posix_spawn, waitpid): Foundation's
/// `Process` can miss the exit of a child whose own child daemonizes (as
/// `pg_ctl start` does) while other threads are spawning processes.
///
/// The child gets only stdin, stdout and stderr: every other descriptor
/// of the test process is closed in it. A daemon started here (a
/// PostgreSQL cluster) would otherwise keep, for its whole life, whatever
/// another test had open at that moment — the write end of `WriterLock`'s
/// pipe, whose reader then never sees its end and never lets go of the
/// lock (a test stalled on it whenever a cluster started beside it).
///
/// It starts in the repository's root, not in the test process's current
/// directory: `ReadmeSwiftTests` moves that into a temporary directory
/// for its run (the guide's example opens a relative path), and a cluster
/// started meanwhile lost it under `pg_ctl` when the test ended ("could not
/// identify current directory", a CI run's crash).
@discardableResult
public func shell(_ command: String) -> Int32 {
  let words: [String] = ["/bin/sh", "-c", command]
  let argv: [UnsafeMutablePointer<CChar>?] = words.map { strdup($0) } + [nil]
  defer { for pointer in argv { free(pointer) } }
  var actions = posix_spawn_file_actions_t()
  posix_spawn_file_actions_init(&actions)
  defer { posix_spawn_file_actions_destroy(&actions) }
  guard let closingFrom = spawnClosingFrom else {
    fatalError("posix_spawn_file_actions_addclosefrom_np: not in this C library (glibc 2.34 or later needed)")
  }
  precondition(closingFrom(&actions, 3) == 0, "posix_spawn_file_actions_addclosefrom_np failed")
  guard let changingDirectory = spawnChangingDirectory else {
    fatalError("posix_spawn_file_actions_addchdir_np: not in this C library (glibc 2.29 or later needed)")
  }
  precondition(changingDirectory(&actions, repositoryRoot) == 0, "posix_spawn_file_actions_addchdir_np failed")
  var pid: pid_t = 0
  guard posix_spawn(&pid, "/bin/sh", &actions, nil, argv, environ) == 0 else { return 127 }
  var status: Int32 = 0
  while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
  return (status & 0x7F) == 0 ? (status >> 8) & 0xFF : 128 + (status & 0x7F)
}

/// glibc's `posix_spawn_file_actions_addclosefrom_np` (2.34 on), which
/// its header declares only under `_GNU_SOURCE` (so Swift's Glibc module
/// does not export it): looked up by name in the test bundle's C library;
/// nil without it.
private typealias ClosingFrom = @convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>, Int32) -> Int32
private let spawnClosingFrom: ClosingFrom? = dlsym(nil, "posix_spawn_file_actions_addclosefrom_np").map {
  unsafeBitCast($0, to: ClosingFrom.self)
}

/// glibc's `posix_spawn_file_actions_addchdir_np` (2.29 on), looked up
/// likewise: the child's working directory.
private typealias ChangingDirectory =
  @convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>, UnsafePointer<CChar>) -> Int32
private let spawnChangingDirectory: ChangingDirectory? = dlsym(nil, "posix_spawn_file_actions_addchdir_np").map {
  unsafeBitCast($0, to: ChangingDirectory.self)
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

/// A child process, spawned and reaped by hand (posix_spawn, waitpid).
///
/// Foundation's `Process` on Linux can miss a child's exit when many are
/// spawned from several threads at once (the child stays a zombie and
/// `waitUntilExit` never returns); this cannot. Children start as a shell
/// would start them: default signal dispositions, nothing blocked, and no
/// descriptor of the test process but the three given.
public final class ChildProcess: @unchecked Sendable {
  public enum Output {
    case file(String)
    case descriptor(Int32)
  }

  public enum TerminationReason { case exit, uncaughtSignal }

  public let processIdentifier: Int32
  private let lock = NSLock()
  private var status: Int32? = nil

  init(
    executable: String, arguments: [String], environment: [String: String], directory: String, stdin: String,
    stdout: Output, stderr: String
  ) {
    var actions = posix_spawn_file_actions_t()
    posix_spawn_file_actions_init(&actions)
    defer { posix_spawn_file_actions_destroy(&actions) }
    posix_spawn_file_actions_addopen(&actions, 0, stdin, O_RDONLY, 0)
    switch stdout {
    case .file(let path): posix_spawn_file_actions_addopen(&actions, 1, path, O_WRONLY, 0)
    case .descriptor(let fd): posix_spawn_file_actions_adddup2(&actions, fd, 1)
    }
    posix_spawn_file_actions_addopen(&actions, 2, stderr, O_WRONLY, 0)
    // glibc's extensions (2.29, 2.34), which Swift's Glibc module does not export.
    if let closingFrom = spawnClosingFrom { _ = closingFrom(&actions, 3) }
    if let changingDirectory = spawnChangingDirectory { _ = changingDirectory(&actions, directory) }
    var attributes = posix_spawnattr_t()
    posix_spawnattr_init(&attributes)
    defer { posix_spawnattr_destroy(&attributes) }
    var empty = sigset_t()
    sigemptyset(&empty)
    posix_spawnattr_setsigmask(&attributes, &empty)
    var defaults = sigset_t()
    sigemptyset(&defaults)
    for signal in [SIGPIPE, SIGINT, SIGTERM, SIGCHLD, SIGHUP, SIGXFSZ] { sigaddset(&defaults, signal) }
    posix_spawnattr_setsigdefault(&attributes, &defaults)
    posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF))
    let argv: [UnsafeMutablePointer<CChar>?] = ([executable] + arguments).map { strdup($0) } + [nil]
    let envp: [UnsafeMutablePointer<CChar>?] = environment.map { strdup("\($0)=\($1)") } + [nil]
    defer { for pointer in argv + envp { free(pointer) } }
    var pid: pid_t = 0
    let rc = posix_spawn(&pid, executable, &actions, &attributes, argv, envp)
    precondition(rc == 0, "cannot start \(executable): \(String(cString: strerror(rc)))")
    processIdentifier = pid
  }

  /// Waits for the child to end (once; later calls return at once).
  public func waitUntilExit() {
    lock.lock()
    defer { lock.unlock() }
    guard status == nil else { return }
    var raw: Int32 = 0
    while waitpid(processIdentifier, &raw, 0) < 0 && errno == EINTR {}
    status = raw
  }

  public var isRunning: Bool {
    lock.lock()
    defer { lock.unlock() }
    guard status == nil else { return false }
    var raw: Int32 = 0
    guard waitpid(processIdentifier, &raw, WNOHANG) == processIdentifier else { return true }
    status = raw
    return false
  }

  private var raw: Int32 {
    waitUntilExit()
    return lock.withLock { status! }
  }

  public var terminationReason: TerminationReason { (raw & 0x7F) == 0 ? .exit : .uncaughtSignal }

  /// The exit code, or the signal that ended it.
  public var terminationStatus: Int32 { (raw & 0x7F) == 0 ? (raw >> 8) & 0xFF : raw & 0x7F }
}

/// Deletes the `heads` row of `stream` from the LMDB database at `db` with
/// python3-lmdb: a damaged derived row, for `verify --repair` to rebuild.
public func deleteHeadsRow(of stream: String = "main", in db: String) -> Run {
  python([
    "-c",
    "import lmdb,sys; e=lmdb.open(sys.argv[1],max_dbs=16); d=e.open_db(b'heads'); t=e.begin(write=True,db=d); t.delete(sys.argv[2].encode()); t.commit()",
    db, stream,
  ])
}

/// The LMDB database at `db` as python3-lmdb reads it: its `meta` format
/// and the first byte (the record format) of each record, `msglog/8 [4, 4, 5]`.
public func lmdbFormats(of db: String) -> Run {
  let inspect = """
    import lmdb, sys
    env = lmdb.open(sys.argv[1], max_dbs=16, readonly=True, lock=False)
    meta, events = env.open_db(b"meta", create=False), env.open_db(b"events", create=False)
    with env.begin() as txn:
        print(txn.get(b"format", db=meta).decode(), [bytes(v)[0] for _, v in txn.cursor(db=events)])
    """
  return python(["-c", inspect, db])
}
