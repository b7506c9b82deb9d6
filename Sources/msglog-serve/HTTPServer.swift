import CMicroHTTPD
import Msglog
import MsglogCLI
import MsglogWire

#if canImport(Glibc)
  import Glibc
#endif

/// `msglog serve`: the JSON API, Server-Sent Events and the web page, on
/// GNU libmicrohttpd (one thread per connection, so an event stream may
/// block in its own thread until the next commit).
///
/// The server parses nothing of HTTP itself: libmicrohttpd reads requests,
/// this class routes them (`Routes`) and answers from `EventLog`.
final class HTTPServer: @unchecked Sendable {
  let log: EventLog
  /// The bearer token every API request must carry, when one is set.
  let token: [UInt8]?
  let commits: CommitHub
  /// A request body over this is refused with 413 (a message is at most
  /// 1 MiB of text; escaping and the other members fit in the rest).
  static let bodyLimit = 1 << 20 + 64 * 1024
  private var daemon: OpaquePointer? = nil

  init(log: EventLog, token: String?) {
    self.log = log
    self.token = token.map { Array($0.utf8) }
    self.commits = CommitHub(log: log)
  }

  /// Starts listening; returns the port bound (useful with port 0).
  func start(on address: ListenAddress) throws(CommandLineError) -> UInt16 {
    let context = Unmanaged.passUnretained(self).toOpaque()
    daemon = address.withSockaddr { sockaddr, isIPv6 in
      msglog_mhd_start(
        sockaddr, isIPv6 ? 1 : 0, 1024, HTTPServer.accessHandler, context, HTTPServer.completed, context)
    }
    guard let daemon else {
      throw .failed("cannot listen on \(address.text): \(String(cString: strerror(errno)))")
    }
    commits.start()
    return msglog_mhd_bound_port(daemon)
  }

  /// Stops accepting, ends the event streams, waits for the requests in
  /// flight (libmicrohttpd joins their threads) and closes.
  func stop() {
    guard let daemon else { return }
    _ = MHD_quiesce_daemon(daemon)
    commits.stop()
    MHD_stop_daemon(daemon)
    self.daemon = nil
  }

  /// A request being received: its body arrives in pieces.
  final class PendingRequest {
    var body: [UInt8] = []
    var tooLarge = false
  }

  static let accessHandler: MHD_AccessHandlerCallback = { context, connection, url, method, _, upload, size, state in
    let server = Unmanaged<HTTPServer>.fromOpaque(context!).takeUnretainedValue()
    return server.handle(connection!, url: url!, method: method!, upload: upload, size: size!, state: state!)
  }

  static let completed: MHD_RequestCompletedCallback = { _, _, state, _ in
    guard let state, let pending = state.pointee else { return }
    Unmanaged<PendingRequest>.fromOpaque(pending).release()
    state.pointee = nil
  }

  private func handle(
    _ connection: OpaquePointer, url: UnsafePointer<CChar>, method: UnsafePointer<CChar>,
    upload: UnsafePointer<CChar>?, size: UnsafeMutablePointer<Int>, state: UnsafeMutablePointer<UnsafeMutableRawPointer?>
  ) -> MHD_Result {
    guard let raw = state.pointee else {
      // First call: headers only. The body (if any) comes next.
      state.pointee = Unmanaged.passRetained(PendingRequest()).toOpaque()
      return msglog_mhd_yes()
    }
    let pending = Unmanaged<PendingRequest>.fromOpaque(raw).takeUnretainedValue()
    if size.pointee > 0 {
      // Keep reading a body over the limit, without keeping it, so that the
      // 413 reaches a client still sending.
      if pending.body.count + size.pointee > HTTPServer.bodyLimit {
        pending.tooLarge = true
        pending.body = []
      } else if !pending.tooLarge, let upload {
        pending.body.append(contentsOf: UnsafeRawBufferPointer(start: upload, count: size.pointee))
      }
      size.pointee = 0
      return msglog_mhd_yes()
    }
    let request = Request(
      method: String(cString: method), path: Self.text(url), connection: connection, body: pending.body)
    let response: Response
    if pending.tooLarge {
      response = .error(413, "the request body is over \(HTTPServer.bodyLimit) bytes")
    } else if request.path.hasPrefix("/api/"), !authorized(request) {
      response = Response.error(401, "a bearer token is needed: send 'Authorization: Bearer TOKEN'")
        .with(header: "WWW-Authenticate", "Bearer")
    } else {
      response = Routes(server: self).respond(to: request)
    }
    return queue(response, on: connection)
  }

  /// Bytes as text; invalid UTF-8 (the path of a hostile request) is
  /// replaced rather than trusted, and then matches no route.
  static func text(_ c: UnsafePointer<CChar>) -> String { String(decoding: UnsafeRawBufferPointer(start: c, count: strlen(c)), as: UTF8.self) }

  /// `Authorization: Bearer TOKEN`, compared in constant time.
  private func authorized(_ request: Request) -> Bool {
    guard let token else { return true }
    guard let header = request.header("Authorization") else { return false }
    let given = Array(header.utf8)
    let expected = Array("Bearer ".utf8) + token
    var difference = UInt8(given.count == expected.count ? 0 : 1)
    for i in 0..<expected.count { difference |= expected[i] ^ (i < given.count ? given[i] : 0) }
    return difference == 0
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
    case .events(let feed):
      let context = Unmanaged.passRetained(feed).toOpaque()
      handle = MHD_create_response_from_callback(
        UInt64.max,  // MHD_SIZE_UNKNOWN: streamed until the server stops
        4096, EventFeed.read, context, EventFeed.free)
    }
    guard let handle else { return msglog_mhd_no() }
    defer { MHD_destroy_response(handle) }
    var headers = response.headers
    headers.append(("Content-Type", response.contentType))
    headers.append(("X-Content-Type-Options", "nosniff"))
    headers.append(("Cache-Control", "no-store"))
    for (name, value) in headers { _ = MHD_add_response_header(handle, name, value) }
    return MHD_queue_response(connection, response.status, handle)
  }
}

/// One request as the routes see it.
struct Request {
  var method: String
  var path: String
  let connection: OpaquePointer
  var body: [UInt8]

  func header(_ name: String) -> String? {
    MHD_lookup_connection_value(connection, msglog_mhd_header_kind(), name).map(HTTPServer.text)
  }

  /// A query parameter; nil when absent. Invalid UTF-8 is refused.
  func query(_ name: String) throws(CommandLineError) -> String? {
    guard let raw = MHD_lookup_connection_value(connection, msglog_mhd_argument_kind(), name) else { return nil }
    guard let value = String(validatingCString: raw) else {
      throw .usage("the parameter \(name) is not valid UTF-8")
    }
    return value
  }
}

/// What a route answers.
struct Response {
  enum Body {
    case bytes([UInt8])
    case events(EventFeed)
  }

  var status: UInt32
  var contentType: String
  var body: Body
  var headers: [(String, String)] = []

  static func json(status: UInt32 = 200, _ body: (inout JSONWriter) throws -> Void) rethrows -> Response {
    var json = JSONWriter()
    try body(&json)
    return Response(status: status, contentType: "application/json", body: .bytes(json.take()))
  }

  static func error(_ status: UInt32, _ message: String) -> Response {
    json(status: status) { $0.error(message) }
  }

  func with(header name: String, _ value: String) -> Response {
    var copy = self
    copy.headers.append((name, value))
    return copy
  }
}
