import MsglogHTTPWire
import Synchronization

#if canImport(Glibc)
  import Glibc
#endif

/// An HTTP/1.1 client for one server (`http://` or `https://`), as the
/// sync talks to `msglog serve`: JSON requests and answers, bodies read
/// whole (bounded) or as they arrive, event streams.
///
/// Connections are kept and reused for the next request (keep-alive), one
/// request on each at a time; requests on several threads at once each get
/// a connection of their own. `cancel()`, from any thread, ends every
/// blocked wait of this client at once with `.cancelled`, and every later
/// request too.
///
/// Answers of any status are answers (a 409 is the caller's to read);
/// errors are `HTTPClientError`s: the request could not be sent, or the
/// answer did not come whole.
package final class HTTPClient: Sendable {
  package struct Configuration: Sendable {
    /// Sent as `Authorization: Bearer TOKEN` with every request.
    package var token: String?
    /// PEM certificates to trust instead of the system's roots (for a
    /// server whose certificate a team's own authority signed).
    package var caFile: String?
    /// The longest wait for a connection (and its TLS handshake).
    package var connectTimeout: Double
    /// The longest wait for the next byte of an answer (or for the server
    /// to take the next byte of a request).
    package var idleTimeout: Double
    /// The `User-Agent` (`msglog/VERSION`).
    package var userAgent: String
    /// The longest answer head taken, in bytes.
    package var headLimit: Int
    /// The program that makes https:// connections for a process that
    /// cannot run GnuTLS itself (a static executable; see `TLSRelay`);
    /// nil: `msglog-tls` beside the running executable. A process that can
    /// run GnuTLS uses it only when `relaysTLS` is set.
    package var tlsHelper: String?
    /// Makes https:// connections through `tlsHelper` even where GnuTLS
    /// could run in this process (for tests of the helper).
    package var relaysTLS: Bool

    package init(
      token: String? = nil, caFile: String? = nil, connectTimeout: Double = 10, idleTimeout: Double = 30,
      userAgent: String = "msglog", headLimit: Int = 65_536, tlsHelper: String? = nil, relaysTLS: Bool = false
    ) {
      self.token = token
      self.caFile = caFile
      self.connectTimeout = connectTimeout
      self.idleTimeout = idleTimeout
      self.userAgent = userAgent
      self.headLimit = headLimit
      self.tlsHelper = tlsHelper
      self.relaysTLS = relaysTLS
    }
  }

  package let url: HTTPURL
  package let configuration: Configuration
  let cancellation = Cancellation()
  /// Kept connections, newest last; and the credentials, once loaded.
  private let state = Mutex(State())
  /// Kept connections beyond this many are closed.
  private static let keptLimit = 4

  private struct State: ~Copyable {
    var idle: [UncheckedConnection] = []
    var credentials: TLSCredentials? = nil
    var opened = 0
  }

  /// A connection parked in the pool: only one thread ever holds it out.
  private struct UncheckedConnection: @unchecked Sendable {
    let connection: Connection
  }

  package init(_ url: HTTPURL, _ configuration: Configuration = Configuration()) {
    self.url = url
    self.configuration = configuration
  }

  /// Sends `request` and reads the whole answer, at most `limit` body
  /// bytes (more: `.answerTooLarge`).
  package func send(_ request: HTTPRequest, limit: Int) throws -> HTTPResponse {
    let stream = try open(request)
    let body = try stream.readAll(limit: limit)
    return HTTPResponse(head: stream.head, body: body)
  }

  /// Sends `request` and returns once the answer's head has arrived; its
  /// body is read from the stream as it comes. Finish the stream (read to
  /// its end, or `close()` it) before its connection can carry another
  /// request; a stream dropped unfinished closes its connection.
  package func open(_ request: HTTPRequest) throws -> HTTPResponseStream {
    let bytes = try request.encoded(for: url, token: configuration.token, userAgent: configuration.userAgent)
    let idle = request.idleTimeout ?? configuration.idleTimeout
    let exchange = request.exchangeTimeout.map(ExchangeDeadline.init)
    var retried = false
    while true {
      if cancellation.isRaised { throw HTTPClientError.cancelled(origin: url.origin) }
      let (connection, reused) = try exchange?.bounding(url.origin) { try checkOut(by: exchange) } ?? checkOut(by: nil)
      do {
        try connection.send(bytes, idle: idle, by: exchange)
        let head = try readHead(from: connection, idle: idle, by: exchange)
        let framing: BodyFraming
        do {
          framing = try BodyFraming.of(head, method: request.method)
        } catch {
          throw HTTPClientError.malformedAnswer(origin: url.origin, reason: error.reason)
        }
        return HTTPResponseStream(
          head: head, framing: framing, connection: connection, keepAlive: Self.allowsReuse(head),
          idle: idle, exchange: exchange, client: self)
      } catch let error as HTTPClientError {
        // The ordinary race of keep-alive: the server closed the kept
        // connection as the request went out, and never saw it.
        if reused, !retried, request.retriesOnStaleConnection, !connection.heardSinceRequest,
          case .connectionLost = error
        {
          retried = true
          continue
        }
        throw error
      }
    }
  }

  /// Ends every blocked wait of this client now, and every request after,
  /// with `.cancelled`. Safe from any thread, and from a signal handler's
  /// thread (one write to an eventfd).
  package func cancel() { cancellation.raise() }

  package var isCancelled: Bool { cancellation.isRaised }

  /// Closes the kept connections (they close with the client too).
  package func closeIdleConnections() {
    let idle = state.withLock { state in
      defer { state.idle.removeAll() }
      return state.idle
    }
    _ = idle
  }

  /// How many connections this client has opened so far (a test sees
  /// keep-alive at work by it).
  package var connectionsOpened: Int { state.withLock { $0.opened } }

  // MARK: - Connections

  private func checkOut(by exchange: ExchangeDeadline?) throws -> (Connection, reused: Bool) {
    while let kept = state.withLock({ $0.idle.popLast() }) {
      if kept.connection.isIdleAndOpen { return (kept.connection, true) }
    }
    let connectTimeout = exchange?.shorten(configuration.connectTimeout) ?? configuration.connectTimeout
    let connection = try Connection(
      to: url, connectTimeout: connectTimeout, cancellation: cancellation,
      relaying: configuration.relaysTLS, tlsHelper: tlsHelper, caFile: configuration.caFile,
      credentials: credentials)
    state.withLock { $0.opened += 1 }
    return (connection, false)
  }

  /// A connection whose answer was read to its end, for the next request.
  func checkIn(_ connection: Connection) {
    guard !cancellation.isRaised else { return }
    let dropped: UncheckedConnection? = state.withLock { state in
      state.idle.append(UncheckedConnection(connection: connection))
      return state.idle.count > Self.keptLimit ? state.idle.removeFirst() : nil
    }
    _ = dropped
  }

  /// The helper program for https:// in a process that cannot run GnuTLS.
  private func tlsHelper() throws -> String {
    if let program = configuration.tlsHelper { return program }
    var buffer = [CChar](repeating: 0, count: 4_096)
    let length = readlink("/proc/self/exe", &buffer, buffer.count - 1)
    let me = length > 0 ? String(decoding: buffer[..<length].map { UInt8(bitPattern: $0) }, as: UTF8.self) : ""
    let program = String(me[..<(me.lastIndex(of: "/") ?? me.startIndex)]) + "/msglog-tls"
    guard access(program, X_OK) == 0 else {
      throw HTTPClientError.tls(
        origin: url.origin,
        .unavailable(
          "https:// in a static executable needs its helper msglog-tls beside it (\(program) is missing): "
            + "build it with 'swift build --product msglog-tls'"))
    }
    return program
  }

  private func credentials() throws -> TLSCredentials {
    if let loaded = state.withLock({ $0.credentials }) { return loaded }
    do {
      try TLSLibrary.load()
    } catch HTTPClientError.tls(_, let failure) {
      throw HTTPClientError.tls(origin: url.origin, failure)
    }
    let made = try TLSCredentials(caFile: configuration.caFile, origin: url.origin)
    return state.withLock { state in
      if let loaded = state.credentials { return loaded }
      state.credentials = made
      return made
    }
  }

  // MARK: - The answer's head

  /// The final answer's head; interim 1xx answers (100 Continue, 103
  /// Early Hints) are read and skipped — for no longer than `exchange`
  /// allows, however many come.
  private func readHead(from connection: Connection, idle: Double, by exchange: ExchangeDeadline?) throws
    -> HTTPResponseHead
  {
    while true {
      let head: HTTPResponseHead
      do {
        while true {
          if let parsed = try Self.responseHead(connection.buffered, limit: configuration.headLimit) {
            head = parsed.head
            connection.take(parsed.length)
            break
          }
          switch try connection.fill(idle: idle, by: exchange) {
          case .more: continue
          case .closed, .closedWithoutTLSEnd:
            throw HTTPClientError.connectionLost(
              origin: url.origin,
              reason: connection.buffered.isEmpty && !connection.heardSinceRequest
                ? "closed the connection without answering" : "closed the connection in the middle of the answer's head"
            )
          }
        }
      } catch let error as HTTPSyntaxError {
        throw HTTPClientError.malformedAnswer(origin: url.origin, reason: error.reason)
      }
      if head.status == 101 {
        throw HTTPClientError.malformedAnswer(origin: url.origin, reason: "the server switched protocols unasked")
      }
      if head.status >= 200 { return head }
    }
  }

  /// The answer's head at the start of `bytes` and how many bytes it took;
  /// nil when not all of it has arrived, and at most `limit` bytes.
  package static func responseHead(_ bytes: ArraySlice<UInt8>, limit: Int) throws(HTTPSyntaxError) -> (
    head: HTTPResponseHead, length: Int
  )? {
    let parsed: HTTPHeadParser.Head<HTTPHeadParser.StatusLine>?
    do {
      parsed = try bytes.withUnsafeBytes { try HTTPHeadParser.response($0, limits: .head(limit)) }
    } catch let error as HTTPSyntaxError {
      throw error
    } catch {
      preconditionFailure("\(error)")
    }
    guard let parsed else { return nil }
    let line = parsed.start
    return (
      HTTPResponseHead(
        version: line.version, status: line.status, reason: line.reason,
        headers: parsed.fields.map { HTTPHeader($0.0, $0.1) }), parsed.length
    )
  }

  /// Whether the connection may carry another request after this answer.
  private static func allowsReuse(_ head: HTTPResponseHead) -> Bool {
    let connection = head.elements(of: "connection")
    if connection.contains("close") { return false }
    return head.version == "HTTP/1.1" || connection.contains("keep-alive")
  }
}
