import CMicroHTTPD
import Msglog

#if canImport(Glibc)
  import Glibc
#endif

/// `msglog serve`: the JSON API, Server-Sent Events and the web page, on
/// GNU libmicrohttpd (one thread per connection, so an event stream may
/// block in its own thread until the next commit).
///
/// libmicrohttpd reads requests; each is decoded into a plain `Request`
/// (`PendingRequest`) and answered by the `Router` from the route table.
package final class HTTPServer: @unchecked Sendable {  // `daemon` is set by start and cleared by stop, on one thread
  package let log: EventLog
  package let configuration: ServerConfiguration
  package let router: Router
  let commits: CommitHub
  private var daemon: OpaquePointer? = nil

  package init(log: EventLog, configuration: ServerConfiguration) throws(ServerError) {
    self.log = log
    self.configuration = configuration
    commits = try CommitHub(log: log)
    router = Router(
      routes: Routes.table(log: log, commits: commits), policy: RequestPolicy(token: configuration.token))
  }

  /// Starts listening; returns the port bound (the one the system chose for port 0).
  package func start() throws(ServerError) -> UInt16 {
    let context = Unmanaged.passUnretained(self).toOpaque()
    let address = configuration.listen
    daemon = address.withSockaddr { sockaddr, isIPv6 in
      msglog_mhd_start(
        sockaddr, isIPv6 ? 1 : 0, 1024, HTTPServer.accessHandler, context, HTTPServer.target, HTTPServer.completed)
    }
    guard let daemon else {
      throw ServerError("cannot listen on \(address.text): \(String(cString: strerror(errno)))")
    }
    commits.start()
    return msglog_mhd_bound_port(daemon)
  }

  /// Stops accepting, ends the event streams, waits for the requests in
  /// flight (libmicrohttpd joins their threads) and closes.
  package func stop() {
    guard let daemon else { return }
    _ = MHD_quiesce_daemon(daemon)
    commits.stop()
    MHD_stop_daemon(daemon)
    self.daemon = nil
  }

  // MARK: - libmicrohttpd's callbacks

  /// A request's target, as sent: its context from now on.
  static let target: msglog_mhd_target_callback = { _, target, _ in
    Unmanaged.passRetained(PendingRequest(target: target.map(HTTPServer.text) ?? "")).toOpaque()
  }

  static let accessHandler: MHD_AccessHandlerCallback = {
    context, connection, _, method, version, upload, size, state in
    let server = Unmanaged<HTTPServer>.fromOpaque(context!).takeUnretainedValue()
    return server.handle(
      connection!, method: method!, version: version!, upload: upload, size: size!, state: state!)
  }

  static let completed: MHD_RequestCompletedCallback = { _, _, state, _ in
    guard let state, let pending = state.pointee else { return }
    Unmanaged<PendingRequest>.fromOpaque(pending).release()
    state.pointee = nil
  }

  private func handle(
    _ connection: OpaquePointer, method: UnsafePointer<CChar>, version: UnsafePointer<CChar>,
    upload: UnsafePointer<CChar>?, size: UnsafeMutablePointer<Int>, state: UnsafeMutablePointer<UnsafeMutableRawPointer?>
  ) -> MHD_Result {
    if state.pointee == nil { state.pointee = Unmanaged.passRetained(PendingRequest(target: "")).toOpaque() }
    let pending = Unmanaged<PendingRequest>.fromOpaque(state.pointee!).takeUnretainedValue()
    if !pending.headersRead {
      // First call: headers only. The body (if any) comes next.
      pending.readHeaders(connection, method: HTTPServer.text(method), version: HTTPServer.text(version))
      return msglog_mhd_yes()
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
    let stream = Unmanaged<ResponseStream>.fromOpaque(context!).takeUnretainedValue()
    switch stream.read(into: buffer!, max: max) {
    case .bytes(let count): return count
    case .end: return -1  // MHD_CONTENT_READER_END_OF_STREAM
    case .failed: return -2  // MHD_CONTENT_READER_END_WITH_ERROR: the client sees a cut answer
    }
  }

  static let freeStream: MHD_ContentReaderFreeCallback = { context in
    let stream = Unmanaged<ResponseStream>.fromOpaque(context!).takeRetainedValue()
    stream.cancel()
  }

  static let readEvents: MHD_ContentReaderCallback = { context, _, buffer, max in
    let feed = Unmanaged<EventFeed>.fromOpaque(context!).takeUnretainedValue()
    switch feed.read(into: buffer!, max: max) {
    case .bytes(let count): return count
    case .end: return -1
    case .failed: return -2
    }
  }

  static let freeEvents: MHD_ContentReaderFreeCallback = { context in
    Unmanaged<EventFeed>.fromOpaque(context!).takeRetainedValue().cancel()
  }
}
