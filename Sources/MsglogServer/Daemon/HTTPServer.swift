import CMicroHTTPD
import Msglog

#if canImport(Glibc)
  import Glibc
#endif

/// `msglog serve`: the JSON API, Server-Sent Events and the web page, on
/// GNU libmicrohttpd (one thread per connection, so an event stream may
/// block in its own thread until the next commit).
///
/// The `Acceptor` takes connections within the limits and hands them to
/// libmicrohttpd, which reads requests; each is decoded into a plain
/// `Request` (`PendingRequest`) and answered by the `Router` from the route
/// table.
package final class HTTPServer: @unchecked Sendable {  // `daemon`, `acceptor`, `hook`: set by start, cleared by stop, on one thread
  package let log: EventLog
  package let configuration: ServerConfiguration
  package let router: Router
  let commits: CommitHub
  private var daemon: OpaquePointer? = nil
  private var acceptor: Acceptor? = nil
  private var hook: UnsafeMutablePointer<msglog_mhd_closed_hook>? = nil

  package init(log: EventLog, configuration: ServerConfiguration) throws(ServerError) {
    self.log = log
    self.configuration = configuration
    commits = try CommitHub(log: log)
    router = Router(
      routes: Routes.table(log: log, commits: commits, stallLimit: configuration.stallLimit),
      policy: configuration.policy)
  }

  /// Starts listening; returns the port bound (the one the system chose for port 0).
  package func start() throws(ServerError) -> UInt16 {
    let limits = configuration.connectionLimits ?? .fromDescriptorLimit()
    let acceptor = try Acceptor(
      listen: configuration.listen, limits: limits, headerDeadline: configuration.headerDeadline)
    let context = Unmanaged.passUnretained(self).toOpaque()
    let hook = UnsafeMutablePointer<msglog_mhd_closed_hook>.allocate(capacity: 1)
    hook.initialize(to: msglog_mhd_closed_hook(closed: HTTPServer.closed, context: context))
    // libmicrohttpd's own limit is above the acceptor's, which decides.
    guard
      let daemon = msglog_mhd_start(
        UInt32(limits.total + 16), HTTPServer.accessHandler, context, HTTPServer.target, HTTPServer.completed, hook)
    else {
      hook.deallocate()
      throw ServerError("cannot start the HTTP server: \(String(cString: strerror(errno)))")
    }
    // Set before the first connection is handed over: libmicrohttpd's
    // threads read them from then on.
    (self.daemon, self.acceptor, self.hook) = (daemon, acceptor, hook)
    do {
      try acceptor.start(handingTo: daemon)
    } catch {
      MHD_stop_daemon(daemon)
      hook.deallocate()
      (self.daemon, self.acceptor, self.hook) = (nil, nil, nil)
      throw error
    }
    commits.start()
    return acceptor.port
  }

  /// Stops accepting, ends the event streams, waits for the requests in
  /// flight (libmicrohttpd joins their threads) and closes.
  package func stop() {
    guard let daemon, let acceptor, let hook else { return }
    acceptor.stop()
    commits.stop()
    MHD_stop_daemon(daemon)
    hook.deallocate()
    (self.daemon, self.acceptor, self.hook) = (nil, nil, nil)
  }

  // MARK: - libmicrohttpd's callbacks

  /// A request's target, as sent: its context from now on.
  static let target: msglog_mhd_target_callback = { _, target, _ in
    Unmanaged.passRetained(PendingRequest(target: target.map(HTTPServer.text) ?? "")).toOpaque()
  }

  static let closed: msglog_mhd_closed_callback = { context, fd in
    let server = Unmanaged<HTTPServer>.fromOpaque(context!).takeUnretainedValue()
    server.acceptor?.closed(fd)
  }

  static let accessHandler: MHD_AccessHandlerCallback = {
    context, connection, _, method, version, upload, size, state in
    let server = Unmanaged<HTTPServer>.fromOpaque(context!).takeUnretainedValue()
    return server.handle(
      connection!, method: method!, version: version!, upload: upload, size: size!, state: state!)
  }

  static let completed: MHD_RequestCompletedCallback = { context, connection, state, _ in
    let server = Unmanaged<HTTPServer>.fromOpaque(context!).takeUnretainedValue()
    if let connection { server.acceptor?.connections.requestDone(msglog_mhd_connection_fd(connection)) }
    guard let state, let pending = state.pointee else { return }
    Unmanaged<PendingRequest>.fromOpaque(pending).release()
    state.pointee = nil
  }

  private func handle(
    _ connection: OpaquePointer, method: UnsafePointer<CChar>, version: UnsafePointer<CChar>,
    upload: UnsafePointer<CChar>?, size: UnsafeMutablePointer<Int>,
    state: UnsafeMutablePointer<UnsafeMutableRawPointer?>
  ) -> MHD_Result {
    if state.pointee == nil { state.pointee = Unmanaged.passRetained(PendingRequest(target: "")).toOpaque() }
    let pending = Unmanaged<PendingRequest>.fromOpaque(state.pointee!).takeUnretainedValue()
    if !pending.headersRead {
      // First call: headers only. The body (if any) comes next, unless the
      // request's framing cannot be trusted: that is answered now, and the
      // connection closed.
      acceptor?.connections.headersArrived(msglog_mhd_connection_fd(connection))
      let refusal = pending.readHeaders(
        connection, method: HTTPServer.text(method), version: HTTPServer.text(version), router: router)
      return refusal.map { queue(.error($0), on: connection) } ?? msglog_mhd_yes()
    }
    if size.pointee > 0 {
      pending.receive(upload, count: size.pointee)
      size.pointee = 0
      return msglog_mhd_yes()
    }
    return queue(pending.answer(router), on: connection)
  }

  /// Bytes as text; invalid UTF-8 (the path of a hostile request) is
  /// replaced rather than trusted, and then matches no route.
  static func text(_ c: UnsafePointer<CChar>) -> String {
    String(decoding: UnsafeRawBufferPointer(start: c, count: strlen(c)), as: UTF8.self)
  }

  private func queue(_ response: Response, on connection: OpaquePointer) -> MHD_Result {
    let handle: OpaquePointer?
    switch response.body {
    case .bytes(let bytes):
      handle = bytes.withUnsafeBytes { raw in
        MHD_create_response_from_buffer(
          raw.count, UnsafeMutableRawPointer(mutating: raw.baseAddress ?? UnsafeRawPointer(bitPattern: 1)!),
          msglog_mhd_must_copy())
      }
    case .stream(let stream):
      handle = MHD_create_response_from_callback(
        UInt64.max,  // MHD_SIZE_UNKNOWN: chunked, or to the end of the connection
        ResponseStream.capacity, HTTPServer.readStream, Unmanaged.passRetained(stream).toOpaque(),
        HTTPServer.freeStream)
    case .events(let feed):
      handle = MHD_create_response_from_callback(
        UInt64.max, 4096, HTTPServer.readEvents, Unmanaged.passRetained(feed).toOpaque(), HTTPServer.freeEvents)
    }
    guard let handle else { return msglog_mhd_no() }
    defer { MHD_destroy_response(handle) }
    var headers = response.headers
    headers.append(("Content-Type", response.contentType))
    headers.append(("X-Content-Type-Options", "nosniff"))
    if response.header("Cache-Control") == nil { headers.append(("Cache-Control", "no-store")) }
    for (name, value) in headers { _ = MHD_add_response_header(handle, name, value) }
    return MHD_queue_response(connection, response.status, handle)
  }

  static let readStream: MHD_ContentReaderCallback = { context, _, buffer, max in
    result(Unmanaged<ResponseStream>.fromOpaque(context!).takeUnretainedValue().read(into: buffer!, max: max))
  }

  static let freeStream: MHD_ContentReaderFreeCallback = { context in
    Unmanaged<ResponseStream>.fromOpaque(context!).takeRetainedValue().cancel()
  }

  static let readEvents: MHD_ContentReaderCallback = { context, _, buffer, max in
    result(Unmanaged<EventFeed>.fromOpaque(context!).takeUnretainedValue().read(into: buffer!, max: max))
  }

  /// A chunk as libmicrohttpd's content readers return it.
  private static func result(_ chunk: ResponseStream.Chunk) -> Int {
    switch chunk {
    case .bytes(let count): return count
    case .end: return -1  // MHD_CONTENT_READER_END_OF_STREAM
    case .failed: return -2  // MHD_CONTENT_READER_END_WITH_ERROR: the client sees a cut answer
    }
  }

  static let freeEvents: MHD_ContentReaderFreeCallback = { context in
    Unmanaged<EventFeed>.fromOpaque(context!).takeRetainedValue().cancel()
  }
}
