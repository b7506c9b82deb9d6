import Foundation
import MsglogHTTPClient
import MsglogHTTPWire
import MsglogPosix

#if canImport(Glibc)
  import Glibc
#endif

/// An HTTP/1.1 proxy on 127.0.0.1 between a client and a server (`msglog
/// serve`) that breaks requests on purpose, one kind of failure at a time,
/// so a test can show that nothing is lost or done twice when the network
/// fails at each point of an exchange.
///
/// It understands where messages end (Content-Length and chunked, both
/// ways; answers that run to the end of the connection), forwards each
/// answer as it arrives (an event stream goes on for as long as the server
/// sends it), and keeps one server connection per client connection, as a
/// real proxy would. Each request gets one `Fault`: from the queue the
/// test set (`next`), else the one it fixed (`always`), else one drawn
/// from the mix by a seeded generator, so a run can be repeated exactly.
/// `counts` says what it did, so a test can check that each fault really
/// happened.
///
/// - Warning: it runs until `stop()`: call it (its threads hold it).
public final class FaultProxy: @unchecked Sendable {  // its state is behind `lock`
  /// The port it listens on, and its URL (`http://127.0.0.1:PORT`).
  public let port: UInt16
  public var url: String { "http://127.0.0.1:\(port)" }
  /// Where it forwards to, on 127.0.0.1.
  public let targetPort: UInt16
  /// How long `.delay` waits.
  public let delay: Double

  private let lock = NSLock()
  private var generator: SeededGenerator
  /// Each fault's weight in the draw.
  private let mix: [(Fault, Int)]
  private var fixed: Fault?
  private var queue: [Fault] = []
  private var done: [Fault: Int] = [:]
  private var log: [(fault: Fault, request: String)] = []
  private var open: Set<Int32> = []
  private var stopped = false
  private let listener: Int32
  /// Readable once the proxy stops: every wait polls it.
  private let stopSignal = try! WakePipe()
  private let running = DispatchGroup()

  /// Listens on 127.0.0.1:0, forwarding to 127.0.0.1:`target`. `mix` weighs
  /// the faults drawn with `seed` (by default every request passes).
  public init(target: UInt16, seed: UInt64 = 0, mix: [Fault: Int] = [.pass: 1], delay: Double = 0.05) {
    targetPort = target
    self.delay = delay
    generator = SeededGenerator(seed: seed)
    self.mix = Fault.allCases.compactMap { fault in mix[fault].flatMap { $0 > 0 ? (fault, $0) : nil } }
    precondition(!self.mix.isEmpty, "a mix with no fault")
    let listening = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    var one: Int32 = 1
    setsockopt(listening, SOL_SOCKET, SO_REUSEADDR, &one, socklen_t(MemoryLayout<Int32>.size))
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_addr.s_addr = inet_addr("127.0.0.1")
    var size = socklen_t(MemoryLayout<sockaddr_in>.size)
    let bound = withUnsafeMutablePointer(to: &address) {
      $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { pointer in
        bind(listening, pointer, size) == 0 && getsockname(listening, pointer, &size) == 0
      }
    }
    precondition(bound && Glibc.listen(listening, 64) == 0, "the proxy cannot listen: errno \(errno)")
    listener = listening
    port = UInt16(bigEndian: address.sin_port)
    running.enter()
    let thread = Thread { [self] in
      acceptConnections()
      running.leave()
    }
    thread.start()
  }

  deinit {
    stop()
  }

  // MARK: - What the test sets and reads

  /// Every request from now on gets `fault` (nil: back to the draw).
  public func always(_ fault: Fault?) { lock.withLock { fixed = fault } }

  /// The next requests get these faults, in order, before `always` or the draw.
  public func next(_ faults: [Fault]) { lock.withLock { queue += faults } }

  /// Forgets the faults queued by `next` that no request has had yet.
  public func forgetQueued() { lock.withLock { queue = [] } }

  /// How many times each fault was applied (a fault is counted when it
  /// happened: a dropped answer once the server's answer was read).
  public var counts: [Fault: Int] { lock.withLock { done } }

  /// Each request's fault and request line, in the order they arrived.
  public var history: [(fault: Fault, request: String)] { lock.withLock { log } }

  /// Stops listening, ends every connection, and returns when every
  /// thread of the proxy has ended.
  public func stop() {
    let sockets: Set<Int32>? = lock.withLock {
      guard !stopped else { return nil }
      stopped = true
      return open
    }
    guard let sockets else { return }
    stopSignal.signal()
    for socket in sockets { shutdown(socket, Int32(SHUT_RDWR)) }
    running.wait()
    close(listener)
  }

  // MARK: - Connections

  private func acceptConnections() {
    while true {
      var pollers = [
        pollfd(fd: listener, events: Int16(POLLIN), revents: 0),
        pollfd(fd: stopSignal.readEnd, events: Int16(POLLIN), revents: 0),
      ]
      guard poll(&pollers, 2, -1) >= 0 || errno == EINTR else { return }
      if pollers[1].revents != 0 { return }
      guard pollers[0].revents != 0 else { continue }
      let client = accept(listener, nil, nil)
      guard client >= 0 else { continue }
      guard track(client) else {
        close(client)
        return
      }
      running.enter()
      let thread = Thread { [self] in
        serve(Peer(client, proxy: self))
        running.leave()
      }
      thread.stackSize = 1 << 20
      thread.start()
    }
  }

  /// Registers a socket so `stop()` can shut it down; false once stopped.
  private func track(_ socket: Int32) -> Bool {
    lock.withLock {
      guard !stopped else { return false }
      open.insert(socket)
      return true
    }
  }

  fileprivate func untrack(_ socket: Int32) { _ = lock.withLock { open.remove(socket) } }

  private func choose(for request: String) -> Fault {
    lock.withLock {
      let fault: Fault
      if !queue.isEmpty {
        fault = queue.removeFirst()
      } else if let fixed {
        fault = fixed
      } else {
        var pick = Int(generator.next() % UInt64(mix.reduce(0) { $0 + $1.1 }))
        var drawn = mix[0].0
        for (candidate, weight) in mix {
          if pick < weight {
            drawn = candidate
            break
          }
          pick -= weight
        }
        fault = drawn
      }
      log.append((fault, request))
      return fault
    }
  }

  private func count(_ fault: Fault) { lock.withLock { done[fault, default: 0] += 1 } }

  /// One client connection: its requests in turn, each with its fault.
  private func serve(_ client: Peer) {
    var server: Peer? = nil
    defer {
      client.close()
      server?.close()
    }
    while let (head, request) = client.readHead() {
      let fault = choose(for: request.line)
      if fault == .dropRequest {
        count(.dropRequest)
        return
      }
      if fault == .delay {
        var poller = pollfd(fd: stopSignal.readEnd, events: Int16(POLLIN), revents: 0)
        if poll(&poller, 1, Int32(delay * 1000)) != 0 { return }
      }
      if request.expectsContinue { guard client.send(Array("HTTP/1.1 100 Continue\r\n\r\n".utf8)) else { return } }
      guard let body = client.readBody(request.framing) else { return }
      if server == nil {
        server = Peer(connectingTo: targetPort, proxy: self)
        if server == nil { return }
      }
      guard let upstream = server, upstream.send(head + body) else { return }
      guard let answer = upstream.readAnswerHead(method: request.method) else { return }
      switch fault {
      case .dropRequest:
        return
      case .dropAnswer:
        if !answer.isEventStream { _ = upstream.readBody(answer.framing) }
        count(.dropAnswer)
        return
      case .cutAnswer:
        var bytes = answer.head
        if answer.isEventStream {
          // Endless: what came with the head.
          bytes += upstream.takeBuffered()
        } else if let body = upstream.readBody(answer.framing) {
          bytes += body
        }
        let body = bytes.count - answer.head.count
        let kept = body > 0 ? answer.head.count + body / 2 : answer.head.count / 2
        _ = client.send(Array(bytes.prefix(kept)))
        count(.cutAnswer)
        return
      case .pass, .delay:
        // Counted before the answer goes on: a client that has it whole
        // may look at `counts` at once (CI saw a delay not counted yet).
        count(fault)
        guard client.send(answer.head), upstream.forwardBody(answer.framing, to: client) else { return }
        if !answer.keepsConnection || !request.keepsConnection { return }
      }
    }
  }

  // MARK: - One side of a connection

  /// A request's head, as the proxy reads it.
  fileprivate struct Request {
    var line: String
    var method: String
    var framing: BodyFraming
    var expectsContinue: Bool
    var keepsConnection: Bool
  }

  fileprivate struct Answer {
    var head: [UInt8]
    var framing: BodyFraming
    var isEventStream: Bool
    var keepsConnection: Bool
  }

  /// A socket and what has been read from it and not yet used.
  fileprivate final class Peer {
    let descriptor: Int32
    unowned let proxy: FaultProxy
    private var inbox: [UInt8] = []

    init(_ descriptor: Int32, proxy: FaultProxy) {
      self.descriptor = descriptor
      self.proxy = proxy
    }

    init?(connectingTo port: UInt16, proxy: FaultProxy) {
      self.proxy = proxy
      descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
      var address = sockaddr_in()
      address.sin_family = sa_family_t(AF_INET)
      address.sin_port = port.bigEndian
      address.sin_addr.s_addr = inet_addr("127.0.0.1")
      let connected = withUnsafePointer(to: &address) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
          connect(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0
        }
      }
      guard connected, proxy.track(descriptor) else {
        Glibc.close(descriptor)
        return nil
      }
    }

    func close() {
      proxy.untrack(descriptor)
      Glibc.close(descriptor)
    }

    func send(_ bytes: [UInt8]) -> Bool {
      var offset = 0
      while offset < bytes.count {
        let n = bytes[offset...].withUnsafeBytes {
          Glibc.send(descriptor, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL))
        }
        if n <= 0 { return false }
        offset += n
      }
      return true
    }

    /// Reads more; false at the end of the connection or when the proxy stops.
    func fillUnlessClosed() -> Bool {
      var pollers = [
        pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0),
        pollfd(fd: proxy.stopSignal.readEnd, events: Int16(POLLIN), revents: 0),
      ]
      while poll(&pollers, 2, -1) < 0 { guard errno == EINTR else { return false } }
      if pollers[1].revents != 0 { return false }
      var buffer = [UInt8](repeating: 0, count: 65_536)
      let n = recv(descriptor, &buffer, buffer.count, 0)
      guard n > 0 else { return false }
      inbox += buffer[..<n]
      return true
    }

    func takeBuffered() -> [UInt8] {
      defer { inbox.removeAll() }
      return inbox
    }

    /// A head (request or answer) as sent, up to its empty line, and what
    /// `parse` made of it (with its length); nil when it is malformed or
    /// the connection ends first.
    private func readRawHead<Head>(_ parse: (ArraySlice<UInt8>) throws -> (Head, Int)?) -> ([UInt8], Head)? {
      while true {
        guard let parsed = try? parse(inbox[...]) else {
          guard fillUnlessClosed() else { return nil }
          continue
        }
        let raw = Array(inbox[..<parsed.1])
        inbox.removeFirst(parsed.1)
        return (raw, parsed.0)
      }
    }

    /// The next request's head as it goes to the server (without
    /// `Expect`, which the proxy answers itself), and what it says.
    func readHead() -> ([UInt8], Request)? {
      let read = readRawHead { bytes in
        try bytes.withUnsafeBytes { try HTTPHeadParser.request($0, limits: .head(65_536)) }.map { ($0, $0.length) }
      }
      guard let (_, parsed) = read else { return nil }
      let fields = parsed.fields.map { HTTPHeader($0.0, $0.1) }
      let start = parsed.start
      let words = [start.method, start.target, start.version]
      let line = words.joined(separator: " ")
      let head = HTTPResponseHead(status: 200, headers: fields)
      let framing: BodyFraming
      if !head.values(of: "transfer-encoding").isEmpty {
        framing = .chunked
      } else if let length = head.value(of: "content-length").flatMap({ Int($0) }) {
        framing = length > 0 ? .length(length) : .none
      } else {
        framing = .none
      }
      let expects = head.value(of: "expect")?.lowercased() == "100-continue"
      var forwarded = line + "\r\n"
      for field in fields where field.name.lowercased() != "expect" {
        forwarded += field.name + ": " + field.value + "\r\n"
      }
      forwarded += "\r\n"
      let closes = head.values(of: "connection").contains { $0.lowercased().contains("close") }
      return (
        Array(forwarded.utf8),
        Request(
          line: line, method: String(words[0]), framing: framing, expectsContinue: expects,
          keepsConnection: words[2] == "HTTP/1.1" && !closes)
      )
    }

    /// The final answer's head (interim 1xx answers are read and dropped:
    /// the proxy answered `Expect` itself).
    func readAnswerHead(method: String) -> Answer? {
      while true {
        guard let (raw, head) = readRawHead({ try HTTPClient.responseHead($0, limit: 65_536) }) else { return nil }
        if head.status < 200 { continue }
        guard let framing = try? BodyFraming.of(head, method: method) else { return nil }
        let closes = head.values(of: "connection").contains { $0.lowercased().contains("close") }
        return Answer(
          head: raw, framing: framing,
          isEventStream: head.value(of: "content-type")?.hasPrefix("text/event-stream") == true,
          keepsConnection: head.version == "HTTP/1.1" && !closes && framing != .untilClose)
      }
    }

    /// A whole body, as sent (chunks and all); nil when the connection ends first.
    func readBody(_ framing: BodyFraming) -> [UInt8]? {
      var body: [UInt8] = []
      let whole = forward(framing) { piece in
        body += piece
        return true
      }
      return whole ? body : nil
    }

    /// Sends the body to `client` piece by piece as it arrives; false when
    /// either side ended first.
    func forwardBody(_ framing: BodyFraming, to client: Peer) -> Bool {
      forward(framing) { client.send($0) }
    }

    /// Hands each piece of the body on as it arrives, until `piece` says
    /// stop; whether it ended as its framing says (a body to the end of the
    /// connection: at that end).
    private func forward(_ framing: BodyFraming, _ piece: ([UInt8]) -> Bool) -> Bool {
      switch framing {
      case .none:
        return true
      case .length(var remaining):
        while remaining > 0 {
          if inbox.isEmpty, !fillUnlessClosed() { return false }
          let taken = Array(inbox.prefix(remaining))
          inbox.removeFirst(taken.count)
          remaining -= taken.count
          guard piece(taken) else { return false }
        }
        return true
      case .chunked:
        var decoder = ChunkedDecoder()
        while !decoder.isDone {
          if inbox.isEmpty, !fillUnlessClosed() { return false }
          guard let used = try? inbox.withUnsafeBytes({ try decoder.decode($0, data: { _ in }) }) else { return false }
          let taken = Array(inbox.prefix(used))
          inbox.removeFirst(used)
          guard piece(taken) else { return false }
        }
        return true
      case .untilClose:
        while true {
          if !inbox.isEmpty { guard piece(takeBuffered()) else { return false } }
          guard fillUnlessClosed() else { return true }
        }
      }
    }
  }
}
