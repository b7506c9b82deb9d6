import CEpoll
import Msglog

#if canImport(Glibc)
  import Glibc
#endif

/// One client connection, as its event loop drives it:
///
///     head ─▶ body (10 s for all of it) ─▶ handler (a worker) ─▶ answer ─▶ head again, or close
///
/// What the request line and headers decide (a refusal, a body too large)
/// is answered before any of the body is read, and the connection closed;
/// `100 Continue` goes only to a body that will be read. An answer's body
/// is pulled from its producer a piece at a time, when the client has taken
/// most of the last; an event stream with nothing to send is parked until a
/// commit. Closing after an answer goes through a short linger (the output
/// shut, what the client still sends read and dropped), so that the answer
/// reaches a client still sending instead of being lost to a reset.
final class Connection: @unchecked Sendable {  // its loop's thread only
  let transport: any Transport
  let address: [UInt8]
  unowned let loop: EventLoop
  private var core: ServerCore { loop.core }

  private enum Phase {
    /// Waiting for a request's head, due by then.
    case head(due: Deadline)
    /// Reading the body of `head`, whose bytes are held in the budget.
    case body(RequestHead, due: Deadline, reserved: Int)
    /// A worker is answering.
    case handling
    /// Sending an answer.
    case answering
    /// The answer sent and the output shut; input dropped until the end or then.
    case lingering(until: Deadline)
    case closed
  }

  private var phase: Phase
  private var decoder = RequestDecoder(bodyLimit: ServerConfiguration.bodyLimit)
  private var input: [UInt8] = []
  private var inputStart = 0
  private var output: [UInt8] = []
  private var outputStart = 0
  /// The current answer's body, pulled as the client reads.
  private var producer: (any BodyProducer)? = nil
  private var producing = false
  private var chunked = false
  private var bodyDone = true
  private var closeAfter = false
  private var waitingFor: UInt64? = nil
  private var retryAt: Deadline? = nil
  /// When the client last took bytes (or an answer started), for the stall limit.
  private var lastProgress = Deadline.now()
  /// When the stream last sent anything, for its keep-alive comments.
  private var lastSent = Deadline.now()
  private var peerEnded = false
  private var interest: UInt32 = 0
  private var counted = true
  private var stopping = false

  /// Output held before the body's producer is asked for more.
  static let lowWater = 64 * 1024
  /// Input read ahead while an answer is under way (pipelined requests).
  static let readAhead = 64 * 1024
  static let keepAliveInterval: Double = 15

  init(transport: any Transport, address: [UInt8], loop: EventLoop) {
    self.transport = transport
    self.address = address
    self.loop = loop
    phase = .head(due: .after(seconds: loop.core.headerDeadline))
    interest = EventLoop.readable | UInt32(EPOLLRDHUP.rawValue)
  }

  /// Begins: a connection past the limits is answered at once, and closed.
  func start(refusing refusal: HTTPError?) {
    guard let refusal else { return }
    counted = false
    decoder.stop()
    send(.error(refusal), method: "GET", close: true)
  }

  // MARK: - Readiness

  func handle(_ flags: UInt32) {
    if flags & UInt32(EPOLLERR.rawValue | EPOLLHUP.rawValue) != 0 {
      return close()
    }
    if flags & Self.readableFlags != 0 { readInput() }
    if case .closed = phase { return }
    if flags & EventLoop.writable != 0 { flush() }
    if case .closed = phase { return }
    updateInterest()
  }

  private static let readableFlags = EventLoop.readable | UInt32(EPOLLRDHUP.rawValue)

  private func readInput() {
    let buffer = loop.scratch
    while true {
      if case .lingering = phase {
        // Dropped: nothing after a refused request is read as a request.
        switch transport.read(into: buffer) {
        case .bytes: continue
        case .wouldBlock: return
        case .ended, .failed: return close()
        }
      }
      guard wantsInput else { return }
      switch transport.read(into: buffer) {
      case .bytes(let count):
        if inputStart == input.count {
          // A big body's room is not kept by an idle connection.
          input.removeAll(keepingCapacity: input.capacity <= Self.readAhead)
          inputStart = 0
        } else if inputStart >= 32 * 1024 {
          // Pipelined requests, one always part-read: drop what was decoded.
          input.removeFirst(inputStart)
          inputStart = 0
        }
        input.append(contentsOf: UnsafeRawBufferPointer(rebasing: buffer[..<count]))
        processInput()
        if case .closed = phase { return }
      case .wouldBlock:
        return
      case .ended, .failed:
        peerEnded = true
        return peerHungUp()
      }
    }
  }

  /// Whether to read more now: while a request is coming, and a little
  /// ahead while one is answered.
  private var wantsInput: Bool {
    if peerEnded { return false }
    switch phase {
    case .head, .body: return true
    case .handling, .answering: return input.count - inputStart < Self.readAhead
    case .lingering: return true
    case .closed: return false
    }
  }

  /// The client ended its side: a follower that hangs up frees its slot at
  /// once; a request already read still gets its answer.
  private func peerHungUp() {
    switch phase {
    case .head, .body, .lingering, .closed: close()
    case .handling: closeAfter = true
    case .answering:
      if producer != nil { close() } else { closeAfter = true }
    }
  }

  private func updateInterest() {
    var wanted = UInt32(0)
    if wantsInput { wanted |= EventLoop.readable }
    if !peerEnded { wanted |= UInt32(EPOLLRDHUP.rawValue) }
    if outputStart < output.count { wanted |= EventLoop.writable }
    if wanted != interest {
      interest = wanted
      loop.modify(transport.fd, wanted)
    }
  }

  // MARK: - Requests

  private func processInput() {
    while true {
      switch phase {
      case .head, .body: break
      default: return
      }
      let (taken, event) = input.withUnsafeBytes { raw in
        decoder.decode(UnsafeRawBufferPointer(rebasing: raw[inputStart...]))
      }
      inputStart += taken
      guard let event else {
        if taken == 0 { return }
        continue
      }
      switch event {
      case .head(let head): judge(head)
      case .request(let head, let body):
        if case .body(_, _, let reserved) = phase { core.budget.release(reserved) }
        dispatch(head, body: body)
      case .refused(let error):
        releaseBody()
        send(.error(error), method: "GET", close: true)
      }
    }
  }

  /// Decides from the head alone: a refusal is answered now, without the
  /// body; an accepted body is read (with `100 Continue` when asked for).
  private func judge(_ head: RequestHead) {
    let hasBody = head.framing != .none && head.framing != .length(0)
    let refusal: HTTPError?
    do {
      let request = try Request(method: head.method, target: head.target, version: head.version, headers: head.headers)
      if case .refused(let error) = core.router.resolve(request) { refusal = error } else { refusal = nil }
    } catch {
      refusal = error
    }
    if let refusal {
      decoder.stop()
      return send(.error(refusal), method: head.method, close: hasBody || !head.keepAlive)
    }
    guard hasBody else {
      if case .request(let head, let body)? = decoder.readBody(of: head) { dispatch(head, body: body) }
      return
    }
    let reserve: Int
    switch head.framing {
    case .length(let count):
      guard count <= ServerConfiguration.bodyLimit else {
        decoder.stop()
        return send(
          .error(HTTPError(status: 413, message: "the request body is over \(ServerConfiguration.bodyLimit) bytes")),
          method: head.method, close: true)
      }
      reserve = count
    default:
      reserve = ServerConfiguration.bodyLimit
    }
    guard core.budget.reserve(reserve) else {
      core.warnings.warn("bodies", "request bodies in memory reached \(core.budget.limit >> 20) MiB: answering 503")
      decoder.stop()
      return send(
        .error(HTTPError(status: 503, message: "the server holds too many request bodies now; retry shortly")),
        method: head.method, close: true)
    }
    phase = .body(head, due: .after(seconds: core.bodyDeadline), reserved: reserve)
    if head.expectsContinue { output += Array("HTTP/1.1 100 Continue\r\n\r\n".utf8) }
    if case .request(let head, let body)? = decoder.readBody(of: head) {
      core.budget.release(reserve)
      dispatch(head, body: body)
    }
    flush()
  }

  private func releaseBody() {
    if case .body(_, _, let reserved) = phase {
      core.budget.release(reserved)
      phase = .handling
    }
  }

  /// A whole request goes to a worker; its answer comes back to the loop.
  private func dispatch(_ head: RequestHead, body: [UInt8]) {
    phase = .handling
    let request: Request
    do {
      request = try Request(
        method: head.method, target: head.target, version: head.version, headers: head.headers, body: body)
    } catch {
      return send(.error(error), method: head.method, close: !head.keepAlive)
    }
    let core = self.core
    let loop = self.loop
    let submitted = core.pool.submit { [self] in
      let response = core.respond(to: request)
      loop.execute { [self] in answer(response, to: head) }
    }
    if !submitted {
      core.warnings.warn("workers", "the workers' queue is full: answering 503")
      send(
        .error(HTTPError(status: 503, message: "the server is too busy now; retry shortly")), method: head.method,
        close: true)
    }
  }

  private func answer(_ response: Response, to head: RequestHead) {
    guard case .handling = phase else {
      cancel(response)
      return
    }
    send(response, method: head.method, close: !head.keepAlive || closeAfter, version: head.version)
  }

  private func cancel(_ response: Response) {
    switch response.body {
    case .bytes: break
    case .stream(let stream): stream.cancel()
    case .events(let feed): feed.cancel()
    }
  }

  // MARK: - Answers

  private func send(_ response: Response, method: String, close: Bool, version: String = "HTTP/1.1") {
    let isHead = method == "HEAD"
    var body: any BodyProducer
    switch response.body {
    case .bytes(let bytes):
      let close = close || stopping || response.header("Connection") == "close"
      let noBody = response.status == 204 || response.status == 304
      output += ResponseHead.encode(
        status: response.status, contentType: noBody ? nil : response.contentType, headers: response.headers,
        delimiting: noBody ? .none : .length(bytes.count), close: close)
      if !isHead && !noBody { output += bytes }
      finishAnswer(close: close)
      return
    case .stream(let stream): body = stream
    case .events(let feed): body = feed
    }
    chunked = version == "HTTP/1.1"
    let close = close || stopping || !chunked
    output += ResponseHead.encode(
      status: response.status, contentType: response.contentType, headers: response.headers,
      delimiting: chunked ? .chunked : .close, close: close)
    if isHead {
      body.cancel()
      if chunked {
        finishAnswer(close: close)
        return
      }
      finishAnswer(close: true)
      return
    }
    phase = .answering
    producer = body
    bodyDone = false
    closeAfter = close
    lastProgress = .now()
    lastSent = .now()
    flush()
    pull()
  }

  /// An answer whose bytes are all in `output`.
  private func finishAnswer(close: Bool) {
    phase = .answering
    producer = nil
    bodyDone = true
    closeAfter = close
    lastProgress = .now()
    flush()
  }

  /// Asks the producer for its next piece, when the client has taken most of the last.
  private func pull() {
    guard let producer, !producing, !bodyDone, waitingFor == nil, retryAt == nil,
      output.count - outputStart < Self.lowWater
    else { return }
    producing = true
    let loop = self.loop
    let submitted = core.pool.submit { [self] in
      let chunk = producer.next()
      loop.execute { [self] in received(chunk) }
    }
    if !submitted {
      producing = false
      retryAt = .after(seconds: 0.1)
    }
  }

  private func received(_ chunk: BodyChunk) {
    producing = false
    guard case .answering = phase, let producer else { return }
    switch chunk {
    case .bytes(let bytes, let last):
      appendBody(bytes)
      // Stopping, an event stream ends after its last complete event.
      if last || (stopping && producer is EventFeed) { endBody() }
    case .end:
      endBody()
    case .failed:
      // A cut answer: what was sent is sent, and no end follows.
      bodyDone = true
      closeAfter = true
      self.producer = nil
      producer.cancel()
    case .waitForCommit(let seq):
      if stopping {
        endBody()
      } else if core.commits.head < seq {
        waitingFor = seq
        loop.park(self)
      }
    case .retry(let seconds):
      if stopping { endBody() } else { retryAt = .after(seconds: seconds) }
    }
    flush()
    pull()
  }

  private func appendBody(_ bytes: [UInt8]) {
    guard !bytes.isEmpty else { return }
    lastSent = .now()
    if chunked {
      output += Array((String(bytes.count, radix: 16) + "\r\n").utf8)
      output += bytes
      output += [13, 10]
    } else {
      output += bytes
    }
  }

  private func endBody() {
    if chunked { output += Array("0\r\n\r\n".utf8) }
    bodyDone = true
    producer = nil
    waitingFor = nil
    loop.unpark(self)
  }

  /// The log's head moved: an event stream waiting for it goes on.
  func headAdvanced(to head: UInt64) {
    guard let seq = waitingFor, head >= seq else { return }
    waitingFor = nil
    loop.unpark(self)
    pull()
  }

  // MARK: - Output

  private func flush() {
    while outputStart < output.count {
      let result = output.withUnsafeBytes { raw in
        transport.write(UnsafeRawBufferPointer(rebasing: raw[outputStart...]))
      }
      switch result {
      case .bytes(let count):
        outputStart += count
        lastProgress = .now()
      case .wouldBlock, .ended:
        updateInterest()
        return
      case .failed:
        return close()
      }
    }
    output.removeAll(keepingCapacity: output.capacity <= Self.lowWater)
    outputStart = 0
    if case .answering = phase, bodyDone { answerSent() }
    if case .closed = phase { return }
    updateInterest()
  }

  /// The whole answer is out: the next request, or the end.
  private func answerSent() {
    producer = nil
    if closeAfter || stopping || peerEnded {
      linger()
      return
    }
    phase = .head(due: .after(seconds: core.headerDeadline))
    processInput()
  }

  /// Shuts the output and drops what the client still sends, for a moment,
  /// before closing: a close with unread input would reset the connection
  /// and could destroy the answer before the client read it.
  private func linger() {
    releaseBody()
    transport.shutdownOutput()
    // Stopping, the process is about to end: a shorter moment.
    phase = .lingering(until: .after(seconds: peerEnded ? 0 : stopping ? 0.5 : 2))
    if peerEnded { close() }
  }

  func close() {
    if case .closed = phase { return }
    releaseBody()
    phase = .closed
    producer?.cancel()
    producer = nil
    loop.forget(self, counted: counted)
    transport.close()
  }

  // MARK: - Time

  func tick(_ now: Deadline) {
    switch phase {
    case .head(let due) where due <= now:
      // Nothing begun: an idle connection ends quietly; part of a head gets a 408.
      guard inputStart < input.count else { return close() }
      decoder.stop()
      send(
        .error(HTTPError(status: 408, message: "the request's head did not arrive within \(Int(core.headerDeadline)) s")),
        method: "GET", close: true)
    case .body(_, let due, _) where due <= now:
      decoder.stop()
      releaseBody()
      send(
        .error(HTTPError(status: 408, message: "the request's body did not arrive within \(Int(core.bodyDeadline)) s")),
        method: "GET", close: true)
    case .lingering(let until) where until <= now:
      close()
    case .answering:
      if outputStart < output.count, now.nanoseconds - lastProgress.nanoseconds > UInt64(core.stallLimit * 1e9) {
        return close()  // a client that takes nothing does not hold its answer for ever
      }
      if let at = retryAt, at <= now {
        retryAt = nil
        pull()
      }
      if waitingFor != nil, now.nanoseconds - lastSent.nanoseconds > UInt64(Self.keepAliveInterval * 1e9) {
        appendBody(Array(": keep-alive\n\n".utf8))
        flush()
      }
    default: break
    }
  }

  /// Stopping: an idle connection closes now; a request read is answered
  /// (and the connection closed after); an event stream ends after its
  /// last complete event.
  func beginStopping() {
    stopping = true
    closeAfter = true
    switch phase {
    case .head:
      close()
    case .answering:
      if waitingFor != nil || retryAt != nil {
        endBody()
        flush()
      } else if producer is EventFeed, !producing {
        endBody()
        flush()
      }
    default: break
    }
  }
}
