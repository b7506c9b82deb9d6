import Foundation
import Msglog
import MsglogLoopback

#if canImport(Glibc)
  import Glibc
#endif

/// `msglog serve` under load: appends per second over HTTP with keep-alive
/// (1 and 16 clients) against the same appends through `EventLog` in
/// process, and the latency from a commit to its Server-Sent Event
/// arriving at each of 200 connected clients.
struct ServeBench {
  var directory: String
  var msglog: String
  var seconds: Double = 3

  struct Results {
    /// (clients, HTTP appends/s, in-process appends/s)
    var throughput: [(Int, Double, Double)]
    var fanoutP50: Duration
    var fanoutP99: Duration
    var samples: Int
  }

  func run() throws -> Results {
    let throughput = try self.throughput(clientCounts: [1, 16])
    let (p50, p99, samples) = try fanout(clients: 200, events: 60)
    return Results(throughput: throughput, fanoutP50: p50, fanoutP99: p99, samples: samples)
  }

  /// Appends per second over HTTP and through `EventLog` in process, with
  /// each number of clients: (clients, HTTP appends/s, in-process appends/s).
  func throughput(clientCounts: [Int]) throws -> [(Int, Double, Double)] {
    try? FileManager.default.removeItem(atPath: directory)
    try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
    var throughput: [(Int, Double, Double)] = []
    for clients in clientCounts {
      let server = try ServerProcess(msglog: msglog, db: directory + "/http-\(clients).lmdb")
      defer { server.stop() }
      let http = try operationsPerSecond(clients: clients, seconds: seconds) { client in
        let connection = try HTTPConnection(port: server.port)
        return { try connection.post("/api/append", #"{"text":"hello from client \#(client)","sender":"bench"}"#) }
      }
      let log = try EventLog(directory + "/inprocess-\(clients).lmdb")
      let inProcess = try operationsPerSecond(clients: clients, seconds: seconds) { client in
        { _ = try log.append("hello from client \(client)", sender: "bench") }
      }
      throughput.append((clients, http, inProcess))
    }
    return throughput
  }

  /// What the request log and the metrics cost: appends per second with
  /// `clients` clients as `serve` runs by default (a text line per request,
  /// to a file; every request and commit counted; /metrics scraped once a
  /// second, as Prometheus would) against `--log-format none --no-metrics`.
  /// The two alternate, `rounds` times each (on, off, then off, on: a
  /// drift in the machine's load falls on both alike), on fresh databases;
  /// the medians: (with, without).
  func operationsCost(clients: Int, rounds: Int) throws -> (Double, Double) {
    try? FileManager.default.removeItem(atPath: directory)
    try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
    var with: [Double] = []
    var without: [Double] = []
    for round in 0..<rounds {
      for operated in round % 2 == 0 ? [true, false] : [false, true] {
        let name = directory + "/cost-\(round)-\(operated ? "on" : "off")"
        let server = try ServerProcess(
          msglog: msglog, db: name + ".lmdb", arguments: operated ? [] : ["--log-format", "none", "--no-metrics"],
          stderr: name + ".log")
        defer { server.stop() }
        let scraping = Scraper(port: operated ? server.port : nil)
        let rate = try operationsPerSecond(clients: clients, seconds: seconds) { client in
          let connection = try HTTPConnection(port: server.port)
          return { try connection.post("/api/append", #"{"text":"hello from client \#(client)","sender":"bench"}"#) }
        }
        try scraping.stop()
        if operated { with.append(rate) } else { without.append(rate) }
      }
    }
    func median(_ values: [Double]) -> Double { values.sorted()[values.count / 2] }
    return (median(with), median(without))
  }

  /// `clients` event streams; a writer appends `events` messages 20 ms
  /// apart; each stream's arrival time minus the commit's return time.
  private func fanout(clients: Int, events: Int) throws -> (Duration, Duration, Int) {
    let db = directory + "/fanout.lmdb"
    let log = try EventLog(db)
    try log.append("seed")
    let server = try ServerProcess(msglog: msglog, db: db)
    defer { server.stop() }
    let sockets = try (0..<clients).map { _ in try HTTPConnection(port: server.port) }
    for socket in sockets { try socket.send("GET /api/follow?from=2 HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n") }
    usleep(500_000)
    let committed = SharedPointer<ContinuousClock.Instant?>(capacity: events + 2, initial: nil)
    defer { committed.free() }
    let writer = Thread {
      for i in 0..<events {
        if let outcome = try? log.append("event \(i)") { committed.pointer[Int(outcome.event.seq)] = .now }
        usleep(20_000)
      }
    }
    writer.start()
    var latencies: [Duration] = []
    var pending = [String](repeating: "", count: clients)
    var seen = [Int](repeating: 0, count: clients)
    let last = events + 1
    let deadline = ContinuousClock.now + .seconds(Double(events) * 0.02 + 15)
    var buffer = [UInt8](repeating: 0, count: 65_536)
    while seen.contains(where: { $0 < last }) && ContinuousClock.now < deadline {
      var fds = sockets.map { pollfd(fd: $0.fd, events: Int16(POLLIN), revents: 0) }
      _ = poll(&fds, nfds_t(fds.count), 100)
      let now = ContinuousClock.now
      for (i, p) in fds.enumerated() where p.revents & Int16(POLLIN) != 0 {
        let n = recv(p.fd, &buffer, buffer.count, 0)
        guard n > 0 else { continue }
        pending[i] += String(decoding: buffer[..<n], as: UTF8.self)
        while let end = pending[i].range(of: "\n") {
          let line = pending[i][..<end.lowerBound]
          if line.hasPrefix("id: "), let seq = Int(line.dropFirst(4)) {
            seen[i] = seq
            // The writer records the commit right after append returns: a
            // sample whose commit time is not in yet is skipped.
            if let at = committed.pointer[seq], now > at { latencies.append(now - at) }
          }
          pending[i].removeSubrange(..<end.upperBound)
        }
      }
    }
    guard !seen.contains(where: { $0 < last }) else { throw BenchError("an SSE client missed events") }
    latencies.sort()
    return (latencies[latencies.count / 2], latencies[latencies.count * 99 / 100], latencies.count)
  }
}

/// Memory the measuring threads share, each writing its own slots.
struct SharedPointer<T>: @unchecked Sendable {
  let pointer: UnsafeMutablePointer<T>

  init(capacity: Int, initial: T) {
    pointer = .allocate(capacity: capacity)
    pointer.initialize(repeating: initial, count: capacity)
  }

  func free() { pointer.deallocate() }
}

final class LockedError: @unchecked Sendable {
  private let lock = NSLock()
  private(set) var error: (any Error)?
  func set(_ error: any Error) { lock.withLock { self.error = error } }
}

/// `msglog serve` on a free port, for the length of a measurement.
final class ServerProcess: @unchecked Sendable {
  let process: Process
  let port: UInt16

  /// `arguments` after `serve`; the request log (stderr) goes to `stderr`,
  /// a file, as a service's goes to its journal.
  init(msglog: String, db: String, arguments: [String] = [], stderr: String = "/dev/null") throws {
    process = Process()
    process.executableURL = URL(fileURLWithPath: msglog)
    process.arguments = ["--db", db, "serve", "--listen", "127.0.0.1:0"] + arguments
    let out = Pipe()
    process.standardOutput = out
    // Opened as a shell's `2> file` would: `FileManager.createFile` writes
    // a new file and renames it over the path, which made /dev/null a
    // plain file (and broke every later `> /dev/null` on the machine).
    let descriptor = open(stderr, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
    guard descriptor >= 0 else { throw BenchError("cannot open \(stderr) for the request log") }
    process.standardError = FileHandle(fileDescriptor: descriptor, closeOnDealloc: true)
    try process.run()
    var line = Data()
    while !line.contains(UInt8(ascii: "\n")) {
      let chunk = out.fileHandleForReading.availableData
      guard !chunk.isEmpty else { throw BenchError("msglog serve printed no address") }
      line += chunk
    }
    let text = String(decoding: line, as: UTF8.self)
    guard let colon = text.range(of: ":", options: .backwards),
      let port = UInt16(text[colon.upperBound...].prefix { $0.isNumber })
    else { throw BenchError("cannot read the port from \(text)") }
    self.port = port
  }

  func stop() {
    process.terminate()
    process.waitUntilExit()
  }
}

/// One keep-alive HTTP/1.1 connection to localhost.
final class HTTPConnection {
  private let socket: LoopbackSocket
  private var buffer: [UInt8] = []
  var fd: Int32 { socket.fd }

  init(port: UInt16) throws {
    guard let socket = LoopbackSocket(port: port) else { throw BenchError("cannot connect to port \(port)") }
    socket.sendImmediately()
    self.socket = socket
  }

  func send(_ text: String) throws {
    guard socket.send(text) else { throw BenchError("send failed") }
  }

  /// POSTs `body` and reads the whole response; throws unless 200.
  func post(_ path: String, _ body: String) throws {
    try send(
      "POST \(path) HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: \(body.utf8.count)\r\n\r\n"
        + body)
    try readAnswer()
  }

  /// GETs `path` (an answer with a Content-Length) and reads it whole; throws unless 200.
  func get(_ path: String) throws {
    try send("GET \(path) HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
    try readAnswer()
  }

  private func readAnswer() throws {
    let separator: [UInt8] = Array("\r\n\r\n".utf8)
    var headerEnd: Int? = nil
    while true {
      if headerEnd == nil, let end = find(separator) { headerEnd = end }
      if let end = headerEnd {
        let head = String(decoding: buffer[..<end], as: UTF8.self)
        guard head.hasPrefix("HTTP/1.1 200") else { throw BenchError("the server answered \(head)") }
        let length =
          head.split(separator: "\r\n").first { $0.lowercased().hasPrefix("content-length:") }
          .flatMap { Int($0.split(separator: ":")[1].trimmingCharacters(in: .whitespaces)) } ?? 0
        if buffer.count >= end + 4 + length {
          buffer.removeFirst(end + 4 + length)
          return
        }
      }
      guard let chunk = socket.read(atMost: 4096, seconds: 60) else {
        throw BenchError("the server closed the connection")
      }
      guard !chunk.isEmpty else { throw BenchError("no answer within 60 s") }
      buffer += chunk
    }
  }

  private func find(_ needle: [UInt8]) -> Int? {
    guard buffer.count >= needle.count else { return nil }
    for i in 0...(buffer.count - needle.count)
    where buffer[i] == needle[0] && Array(buffer[i..<i + needle.count]) == needle {
      return i
    }
    return nil
  }
}

/// GET /metrics once a second on a connection of its own, until stopped
/// (nothing when `port` is nil).
final class Scraper: @unchecked Sendable {  // `stopped` under `lock`
  private let lock = NSLock()
  private var stopped = false
  private let done = DispatchSemaphore(value: 0)
  private let failure = LockedError()
  private let running: Bool

  init(port: UInt16?) {
    running = port != nil
    guard let port else { return }
    Thread { [self] in
      defer { done.signal() }
      do {
        let connection = try HTTPConnection(port: port)
        while !lock.withLock({ stopped }) {
          try connection.get("/metrics")
          usleep(1_000_000)
        }
      } catch { failure.set(error) }
    }.start()
  }

  func stop() throws {
    guard running else { return }
    lock.withLock { stopped = true }
    done.wait()
    if let error = failure.error { throw error }
  }
}
