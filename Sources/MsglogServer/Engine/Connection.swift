import CEpoll
import Msglog

#if canImport(Glibc)
  import Glibc
#endif

/// One client connection, as its event loop drives it:
///
///     head ─▶ (its token looked up ─▶) body (10 s from the head for all of it) ─▶ handler (a worker)
///          ─▶ answer ─▶ head again, or close
///
/// What the request line and headers decide (a refusal, a body too large)
/// is answered before any of the body is read, and the connection closed;
/// `100 Continue` goes only to a body that will be read. An answer's body
/// is pulled from its producer a piece at a time, when the client has taken
/// most of the last; an event stream with nothing to send is parked until a
/// commit. Closing after an answer goes through a short linger (the output
/// shut, what the client still sends read and dropped), so that the answer
/// reaches a client still sending instead of being lost to a reset. Where
/// it is, and what only that part of its life needs, is its `state`.
final class Connection: @unchecked Sendable {  // its loop's thread only
  let transport: any Transport
  /// The peer's address.
  let address: [UInt8]
  /// A `--trusted-proxy`'s connection: each request is from the client the
  /// proxy names, and counts under that client's address while it lasts.
  let viaProxy: Bool
  /// The address this connection counts under now (`ConnectionCount`): the
  /// peer's, or on a proxy's connection the client's whose request it carries.
  var countedUnder: [UInt8]?
  /// The client of the request under way: the peer, or whom a trusted proxy names.
  var client: [UInt8]
  unowned let loop: EventLoop
  var core: ServerCore { loop.core }

  /// Read and replaced several times a request, never held across a call:
  /// not checked for exclusive access at each use (a class's stored `var`
  /// is, at some 80 instructions a time).
  @exclusivity(unchecked) var state: ConnectionState
  var decoder = RequestDecoder(bodyLimit: ServerConfiguration.bodyLimit)
  var input: [UInt8] = []
  var inputStart = 0
  var output: [UInt8] = []
  var outputStart = 0
  /// When the client last took bytes (or an answer began), for the stall
  /// limit: kept by every write, looked at while an answer waits in the
  /// output.
  var lastProgress = Deadline.now()
  /// The socket's unsent bytes at the last tick with output waiting.
  var unsentAtTick: Int? = nil
  /// The client ended its side (nothing more will be read).
  var peerEnded = false
  var interest: UInt32 = 0
  var counted = true
  /// The server is stopping: each answer closes the connection after it.
  var stopping = false
  /// The request being answered, for its log line and metrics: begun when
  /// its head is judged, before the state knows whether a body follows,
  /// and ended when its answer's last byte is written or the connection
  /// closes under it.
  var exchange: Exchange? = nil
  /// Bytes written to the client so far.
  var written = 0

  /// Output held before the body's producer is asked for more.
  static let lowWater = 64 * 1024
  /// Input read ahead while an answer is under way (pipelined requests).
  static let readAhead = 64 * 1024
  static let keepAliveInterval: Double = 15

  init(transport: any Transport, address: [UInt8], loop: EventLoop) {
    self.transport = transport
    self.address = address
    self.loop = loop
    viaProxy = loop.core.proxies.trusts(address)
    countedUnder = viaProxy ? nil : address
    client = address
    state = .readingHead(due: .after(seconds: loop.core.headerDeadline))
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
    if flags & Self.readableFlags != 0 || (flags & EventLoop.writable != 0 && transport.needsWritable) { readInput() }
    if case .closed = state { return }
    if flags & EventLoop.writable != 0 { flush() }
    if case .closed = state { return }
    updateInterest()
  }

  private static let readableFlags = EventLoop.readable | UInt32(EPOLLRDHUP.rawValue)

  func readInput() {
    let buffer = loop.scratch
    while true {
      if case .lingering = state {
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
        if case .closed = state { return }
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
  var wantsInput: Bool {
    if peerEnded { return false }
    switch state {
    case .readingHead, .readingBody: return true
    case .vetting, .handling, .answering: return input.count - inputStart < Self.readAhead
    case .lingering: return true
    case .closed: return false
    }
  }

  /// The client ended its side: a follower that hangs up frees its slot at
  /// once; a request already read still gets its answer.
  func peerHungUp() {
    switch state {
    case .readingHead, .readingBody, .lingering, .closed: close()
    // A request read whole still gets its answer (`vetted`, `answer`).
    case .vetting, .handling: break
    case .answering(let answer):
      if case .streaming = answer.body { close() } else { state.answer?.closeAfter = true }
    }
  }

  func updateInterest() {
    var wanted = UInt32(0)
    if wantsInput { wanted |= EventLoop.readable }
    if !peerEnded { wanted |= UInt32(EPOLLRDHUP.rawValue) }
    if outputStart < output.count || transport.needsWritable { wanted |= EventLoop.writable }
    if wanted != interest {
      interest = wanted
      loop.modify(transport.fd, wanted)
    }
  }

  // MARK: - Requests

  func processInput() {
    while true {
      switch state {
      case .readingHead, .readingBody: break
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
        dispatch(head, body: body, held: keepBody(body))
      case .refused(let error):
        releaseBody()
        send(.error(error), method: "GET", close: true)
      }
    }
  }

  /// Decides from the head alone: a refusal is answered now, without the
  /// body; an accepted body is read (with `100 Continue` when asked for).
  func judge(_ head: RequestHead) {
    let hasBody = head.framing != .none && head.framing != .length(0)
    let refusal: Response?
    // Who sent it is for a worker to find out (a read of the log).
    var undecided: Request? = nil
    do {
      let request = try self.request(head)
      begin(head, path: request.path)
      if let refused = refusalBeforeRouting(head) {
        refusal = .error(refused)
      } else {
        switch core.router.resolve(request, lookingUp: false) {
        case .refused(let error): refusal = .error(error)
        case .needsReading: (refusal, undecided) = (nil, request)
        case .route(_, let caller):
          refusal = nil
          exchange?.token = caller.logName  // named should its client go before the answer
        case .preflight: refusal = nil
        }
      }
    } catch {
      begin(head, path: nil)
      refusal = refusalBeforeRouting(head).map(Response.error) ?? .malformed(error, head: head)
    }
    if let refusal {
      // The connection closes, with a body or without (SPEC: the bytes
      // after a refused request are never read as a request): a client
      // refused by its head has nothing to go on with, and a request
      // pipelined behind a refused one was run (an attacker's append
      // behind a 401, 403 or 404).
      decoder.stop()
      return send(refusal, method: head.method, close: true)
    }
    guard hasBody else {
      if case .request(let head, let body)? = decoder.readBody(of: head) { dispatch(head, body: body) }
      return
    }
    // A body is read only once who sent it is known: a token that needs
    // the log read (a named one, or a wrong one) is looked up first, so
    // that no client without a token the log holds gets `100 Continue` or
    // a share of the bodies' budget.
    // The body's 10 s count from its head, the lookup's time among them.
    let due = Deadline.after(seconds: core.bodyDeadline)
    if let undecided { return vet(head, undecided, due: due) }
    acceptBody(of: head, due: due)
  }

  /// Reads the body of a request let in by its head (with `100 Continue`
  /// when asked for), held in the server's budget.
  func acceptBody(of head: RequestHead, due: Deadline) {
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
    state = .readingBody(due: due, reserved: reserve)
    if head.expectsContinue { output += Array("HTTP/1.1 100 Continue\r\n\r\n".utf8) }
    if case .request(let head, let body)? = decoder.readBody(of: head) {
      dispatch(head, body: body, held: keepBody(body))
    }
    flush()
  }

  /// Decides on a worker who sent `request`, whose body is not read
  /// meanwhile (a little of it may be read ahead, not decoded): a refusal
  /// is answered, and the connection closed; otherwise the body is read.
  func vet(_ head: RequestHead, _ request: Request, due: Deadline) {
    state = .vetting(due: due)
    let core = self.core
    let loop = self.loop
    let submitted = core.pool.submit {
      let resolution = core.router.resolve(request)
      loop.execute { [self] in vetted(head, resolution) }
    }
    if !submitted {
      decoder.stop()
      core.warnings.warn("workers", "the workers' queue is full: answering 503")
      send(
        .error(HTTPError(status: 503, message: "the server is too busy now; retry shortly")), method: head.method,
        close: true)
    }
  }

  private func vetted(_ head: RequestHead, _ resolution: Router.Resolution) {
    // Closed meanwhile (the client hung up, the server stopped).
    guard case .vetting(let due) = state else { return }
    switch resolution {
    case .refused(let error):
      decoder.stop()
      return send(.error(error), method: head.method, close: true)
    // Let in: its token is looked up again once its body is here (it may
    // be revoked, narrowed or expire while the body comes, for up to the
    // body's deadline), so the vetting only spares a refused body.
    case .route(_, let caller):
      exchange?.token = caller.logName  // named should its client go before the answer
    case .preflight, .needsReading: break
    }
    acceptBody(of: head, due: due)
    processInput()
    if case .readingBody = state, transport.hasBufferedInput { readInput() }
    if case .closed = state { return }
    // The client ended its side before its body was whole: it never will be.
    if case .readingBody = state, peerEnded { return close() }
    updateInterest()
  }

  func releaseBody() {
    if case .readingBody(_, let reserved) = state {
      core.budget.release(reserved)
      state = .handling
    }
  }

  /// A body read whole: of its reservation (its declared size, or the
  /// limit for a chunked one) it keeps its own size, held until its request
  /// is answered (`dispatch`). A write waits for its commit without a
  /// worker, so the workers' queue no longer bounds the bodies waiting:
  /// the budget must.
  func keepBody(_ body: [UInt8]) -> Int {
    guard case .readingBody(_, let reserved) = state else { return 0 }
    let kept = min(body.count, reserved)
    core.budget.release(reserved - kept)
    state = .handling
    return kept
  }

  /// A whole request goes to a worker, or a write straight to the group
  /// commit; its answer comes back to the loop. The `held` bytes of the
  /// server's body budget (`keepBody`) are given back once it is answered.
  func dispatch(_ head: RequestHead, body: [UInt8], held: Int = 0) {
    state = .handling
    let core = self.core
    let request: Request
    do {
      request = try self.request(head, body: body)
    } catch {
      core.budget.release(held)
      return send(.malformed(error, head: head), method: head.method, close: !head.keepAlive)
    }
    let loop = self.loop
    let answered: @Sendable (Response) -> Void = { [self] response in
      core.budget.release(held)
      loop.execute { [self] in answer(response, to: head) }
    }
    // A write that needs no read to be let in is queued from here; the
    // thread that commits it answers.
    if core.respondWithoutWaiting(to: request, then: answered) { return }
    let submitted = core.pool.submit {
      // A write is answered by the thread that commits it, perhaps after
      // this worker has gone on to other requests.
      core.respond(to: request, then: answered)
    }
    if !submitted {
      core.budget.release(held)
      core.warnings.warn("workers", "the workers' queue is full: answering 503")
      send(
        .error(HTTPError(status: 503, message: "the server is too busy now; retry shortly")), method: head.method,
        close: true)
    }
  }

  func answer(_ response: Response, to head: RequestHead) {
    guard case .handling = state else {
      cancel(response)
      return
    }
    // A client that ended its side while its request was handled gets its
    // answer, and the close said (`send` says it when stopping).
    send(
      response, method: head.method, close: !head.keepAlive || peerEnded || response.closesConnection,
      version: head.version)
  }

  func cancel(_ response: Response) {
    switch response.body {
    case .bytes: break
    case .stream(let stream): stream.cancel()
    case .events(let feed): feed.cancel()
    }
  }
}
